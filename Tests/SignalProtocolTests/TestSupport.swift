import SignalProtocol
import Testing

// MARK: - Deterministic randomness

/// SplitMix64: a tiny, fully deterministic generator so that every random
/// split or payload in these tests is reproducible from its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `range`, deterministic for the seed.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0 ..< count).map { _ in UInt8.random(in: 0 ... 255, using: &self) }
    }
}

/// Cuts `bytes` into consecutive non-empty chunks of pseudo-random sizes.
/// The scale of the chunks (tiny, small, large) varies with the seed so that
/// both byte-level and bulk splits are exercised.
func randomSplit(_ bytes: [UInt8], seed: UInt64) -> [[UInt8]] {
    var rng = SplitMix64(seed: seed)
    let maxChunk = [2, 3, 9, 130, 4_000, 70_000][Int(seed % 6)]
    var chunks: [[UInt8]] = []
    var index = 0
    while index < bytes.count {
        let size = min(rng.int(in: 1 ... maxChunk), bytes.count - index)
        chunks.append(Array(bytes[index ..< index + size]))
        index += size
    }
    return chunks
}

/// Every byte in its own chunk.
func byteByByte(_ bytes: [UInt8]) -> [[UInt8]] { bytes.map { [$0] } }

// MARK: - Frames

/// A fixed masking key, different bytes at each position so offset errors show.
let testMaskKey = WebSocketMaskKey(0x37, 0xFA, 0x21, 0x3D)

/// A frame as a client sends it (masked), for decoders with role `.server`.
func clientFrame(
    _ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true,
    reservedBits: UInt8 = 0, key: WebSocketMaskKey = testMaskKey
) -> [UInt8] {
    WebSocketFrameEncoder.frame(opcode, payload: payload, fin: fin, reservedBits: reservedBits, maskKey: key)
}

/// A frame as a server sends it (unmasked), for decoders with role `.client`.
func serverFrame(
    _ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true,
    reservedBits: UInt8 = 0
) -> [UInt8] {
    WebSocketFrameEncoder.frame(opcode, payload: payload, fin: fin, reservedBits: reservedBits)
}

/// A deterministic payload whose bytes depend on their position.
func patternPayload(_ count: Int, salt: UInt8 = 0) -> [UInt8] {
    (0 ..< count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 8) &+ Int(salt)) }
}

func utf8Bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

// MARK: - Running the frame decoder

/// One frame as the decoder reported it: its header and its whole payload.
struct DecodedFrame: Equatable, CustomStringConvertible {
    var header: WebSocketFrameHeader
    var payload: [UInt8]

    var description: String { "\(header.opcode) fin=\(header.fin) len=\(payload.count)" }
}

/// What a decoder produced for a stream fed in given chunks.
struct DecoderRun {
    var frames: [DecodedFrame] = []
    var headers: [WebSocketFrameHeader] = []
    /// Number of `.payload` events seen.
    var payloadEvents = 0
    /// Breaches of the event contract (header/payload ordering, chunk sizes).
    var violations: [String] = []
    var error: WebSocketProtocolError?
    /// Index of the chunk whose arrival produced the error.
    var errorChunk: Int?
}

/// Feeds `chunks` one after another, draining the decoder after each one, and
/// checks the event contract on the way. Stops at the first error.
func runDecoder(_ chunks: [[UInt8]], role: WebSocketRole, allowedReservedBits: UInt8 = 0) -> DecoderRun {
    var decoder = WebSocketFrameDecoder(role: role, allowedReservedBits: allowedReservedBits)
    var run = DecoderRun()
    var open: DecodedFrame?
    for (chunkIndex, chunk) in chunks.enumerated() {
        decoder.append(contentsOf: chunk)
        while true {
            let event: WebSocketFrameDecoder.Event?
            do {
                event = try decoder.next()
            } catch {
                run.error = error
                run.errorChunk = chunkIndex
                return run
            }
            guard let event else { break }
            switch event {
            case .header(let header):
                if open != nil { run.violations.append("header while a frame's payload is open") }
                run.headers.append(header)
                open = DecodedFrame(header: header, payload: [])
            case .payload(let part, let isFrameEnd):
                run.payloadEvents += 1
                guard var frame = open else {
                    run.violations.append("payload without a header")
                    continue
                }
                open = nil  // keeps `frame.payload` uniquely referenced: no copy per chunk
                if part.isEmpty && frame.header.payloadLength != 0 {
                    run.violations.append("empty payload chunk for a non-empty frame")
                }
                frame.payload += part
                if frame.payload.count > frame.header.payloadLength {
                    run.violations.append("more payload than the header announced")
                }
                if isFrameEnd {
                    if frame.payload.count != frame.header.payloadLength {
                        run.violations.append(
                            "frame ended early: \(frame.payload.count) of \(frame.header.payloadLength)")
                    }
                    run.frames.append(frame)
                    open = nil
                } else {
                    open = frame
                }
            }
        }
    }
    if decoder.bufferedByteCount != 0 && open == nil && run.error == nil {
        // Bytes left over that do not form a complete header: fine, but noted
        // for tests that expect a fully consumed stream.
        run.violations.append("\(decoder.bufferedByteCount) bytes left undecoded")
    }
    if let open { run.violations.append("stream ended inside \(open)") }
    return run
}

/// The error a decoder throws for `bytes` fed whole, if any.
func decoderError(_ bytes: [UInt8], role: WebSocketRole, allowedReservedBits: UInt8 = 0) -> WebSocketProtocolError? {
    runDecoder([bytes], role: role, allowedReservedBits: allowedReservedBits).error
}

// MARK: - Running the message reader

/// What a message reader produced for a stream fed in given chunks.
struct ReaderRun {
    var events: [WebSocketMessageReader.Event] = []
    var error: WebSocketProtocolError?
    /// Index of the chunk whose arrival produced the error.
    var errorChunk: Int?
}

/// Feeds `chunks` one after another, draining the reader after each; stops at
/// the first error.
func runReader(_ chunks: [[UInt8]], role: WebSocketRole = .server, maxMessageBytes: Int = 1 << 20) -> ReaderRun {
    var reader = WebSocketMessageReader(role: role, maxMessageBytes: maxMessageBytes)
    var run = ReaderRun()
    for (chunkIndex, chunk) in chunks.enumerated() {
        reader.append(contentsOf: chunk)
        do {
            while let event = try reader.next() { run.events.append(event) }
        } catch {
            run.error = error
            run.errorChunk = chunkIndex
            return run
        }
    }
    return run
}
