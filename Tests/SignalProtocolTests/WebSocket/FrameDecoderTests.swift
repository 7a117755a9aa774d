import SignalProtocol
import TestSupport
import Testing

/// The payload lengths at the edges of the three length encodings.
let boundaryLengths = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000]

/// A stream of frames of every kind and length encoding, plus what a decoder
/// must report for it.
struct FrameStream {
    var bytes: [UInt8] = []
    var expected: [DecodedFrame] = []

    mutating func add(
        _ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true,
        reservedBits: UInt8 = 0, key: WebSocketMaskKey?
    ) {
        bytes += WebSocketFrameEncoder.frame(
            opcode, payload: payload, fin: fin, reservedBits: reservedBits, maskKey: key)
        let header = WebSocketFrameHeader(
            fin: fin, reservedBits: reservedBits, opcode: opcode,
            maskKey: key, payloadLength: payload.count)
        expected.append(DecodedFrame(header: header, payload: payload))
    }

    /// A mix of data and control frames, fragmented messages and all length
    /// encodings; masked (as a client sends) when `masked`.
    static func mixed(masked: Bool) -> FrameStream {
        var stream = FrameStream()
        var rng = SplitMix64(seed: 42)
        func key() -> WebSocketMaskKey? {
            guard masked else { return nil }
            let b = rng.bytes(4)
            return WebSocketMaskKey(b[0], b[1], b[2], b[3])
        }
        stream.add(.text, utf8Bytes("Hello"), key: key())
        for (index, length) in boundaryLengths.enumerated() {
            stream.add(.binary, patternPayload(length, salt: UInt8(index)), key: key())
        }
        stream.add(.ping, utf8Bytes("are you there?"), key: key())
        stream.add(.text, utf8Bytes("frag"), fin: false, key: key())
        stream.add(.pong, [], key: key())
        stream.add(.continuation, patternPayload(300), fin: false, key: key())
        stream.add(.ping, patternPayload(125), key: key())
        stream.add(.continuation, utf8Bytes("end"), key: key())
        stream.add(.text, [], key: key())
        stream.add(.binary, rng.bytes(1_000), key: key())
        stream.add(.close, WebSocketFrameEncoder.closePayload(code: .normalClosure, reason: "bye"), key: key())
        return stream
    }
}

@Suite("WebSocketFrameDecoder: framing", .blocking)
struct FrameDecoderTests {
    static let serverStream = FrameStream.mixed(masked: true)
    static let clientStream = FrameStream.mixed(masked: false)

    @Test("whole stream, server role (masked frames)")
    func wholeServer() {
        let run = runDecoder([Self.serverStream.bytes], role: .server)
        #expect(run.error == nil)
        #expect(run.violations.isEmpty, "\(run.violations)")
        #expect(run.frames == Self.serverStream.expected)
    }

    @Test("whole stream, client role (unmasked frames)")
    func wholeClient() {
        let run = runDecoder([Self.clientStream.bytes], role: .client)
        #expect(run.error == nil)
        #expect(run.violations.isEmpty, "\(run.violations)")
        #expect(run.frames == Self.clientStream.expected)
    }

    @Test("byte by byte", arguments: [WebSocketRole.server, .client])
    func byteByByteStream(role: WebSocketRole) {
        let stream = role == .server ? Self.serverStream : Self.clientStream
        let run = runDecoder(byteByByte(stream.bytes), role: role)
        #expect(run.error == nil)
        #expect(run.violations.isEmpty, "\(run.violations)")
        #expect(run.frames == stream.expected)
    }

    @Test("seeded random splits", arguments: 1 ... 18)
    func randomSplits(seed: Int) {
        for (role, stream) in [(WebSocketRole.server, Self.serverStream), (.client, Self.clientStream)] {
            let chunks = randomSplit(stream.bytes, seed: UInt64(seed))
            #expect(chunks.reduce(0) { $0 + $1.count } == stream.bytes.count)
            let run = runDecoder(chunks, role: role)
            #expect(run.error == nil, "seed \(seed)")
            #expect(run.violations.isEmpty, "seed \(seed): \(run.violations)")
            #expect(run.frames == stream.expected, "seed \(seed)")
            #expect(run.headers == stream.expected.map(\.header), "seed \(seed)")
        }
    }

    @Test("each length encoding at its boundaries", arguments: boundaryLengths)
    func lengthBoundaries(length: Int) throws {
        let payload = patternPayload(length)
        let frame = clientFrame(.binary, payload)
        let expectedHeaderSize = (length < 126 ? 2 : length <= 65_535 ? 4 : 10) + 4
        #expect(frame.count == expectedHeaderSize + length)
        var decoder = WebSocketFrameDecoder(role: .server)
        // One byte short of the header: nothing yet.
        decoder.append(contentsOf: frame[..<(expectedHeaderSize - 1)])
        let early = try decoder.next()
        #expect(early == nil)
        decoder.append(contentsOf: frame[(expectedHeaderSize - 1)...])
        let header = WebSocketFrameHeader(opcode: .binary, maskKey: testMaskKey, payloadLength: length)
        let first = try decoder.next()
        #expect(first == .header(header))
        let second = try decoder.next()
        #expect(second == .payload(payload, isFrameEnd: true))
        let third = try decoder.next()
        #expect(third == nil)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func zeroLengthFrameYieldsOneEmptyChunk() throws {
        var decoder = WebSocketFrameDecoder(role: .client)
        decoder.append(contentsOf: serverFrame(.ping, []))
        let header = try decoder.next()
        #expect(header == .header(WebSocketFrameHeader(opcode: .ping, payloadLength: 0)))
        let payload = try decoder.next()
        #expect(payload == .payload([], isFrameEnd: true))
        let end = try decoder.next()
        #expect(end == nil)
    }

    @Test func headerIsReportedBeforeAnyPayloadArrives() throws {
        var decoder = WebSocketFrameDecoder(role: .server)
        let frame = clientFrame(.binary, patternPayload(1_000))
        decoder.append(contentsOf: frame[..<8])  // 2 + 2 length + 4 mask
        let header = try decoder.next()
        #expect(header == .header(WebSocketFrameHeader(opcode: .binary, maskKey: testMaskKey, payloadLength: 1_000)))
        let nothing = try decoder.next()
        #expect(nothing == nil)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func payloadIsStreamedAndUnmaskedAtTheRightOffsets() throws {
        // Odd chunk sizes so each chunk starts at a different mask offset.
        let payload = patternPayload(23)
        let frame = clientFrame(.binary, payload)
        var decoder = WebSocketFrameDecoder(role: .server)
        decoder.append(contentsOf: frame[..<6])
        _ = try decoder.next()
        var received: [UInt8] = []
        var cursor = 6
        for size in [1, 2, 3, 5, 7, 5] {
            decoder.append(contentsOf: frame[cursor ..< cursor + size])
            cursor += size
            let event = try decoder.next()
            let expectedChunk = Array(payload[received.count ..< received.count + size])
            #expect(event == .payload(expectedChunk, isFrameEnd: cursor == frame.count))
            received += expectedChunk
            let none = try decoder.next()
            #expect(none == nil)
        }
        #expect(received == payload)
    }

    @Test func payloadChunkStopsAtTheFrameEnd() throws {
        // Two frames in one append: the first frame's chunk must not swallow
        // the second frame's bytes.
        var decoder = WebSocketFrameDecoder(role: .client)
        decoder.append(contentsOf: serverFrame(.text, utf8Bytes("abc")) + serverFrame(.binary, [1, 2]))
        var events: [WebSocketFrameDecoder.Event] = []
        while let event = try decoder.next() { events.append(event) }
        #expect(
            events == [
                .header(WebSocketFrameHeader(opcode: .text, payloadLength: 3)),
                .payload(utf8Bytes("abc"), isFrameEnd: true),
                .header(WebSocketFrameHeader(opcode: .binary, payloadLength: 2)),
                .payload([1, 2], isFrameEnd: true),
            ])
    }

    @Test func rawBufferAppend() throws {
        var decoder = WebSocketFrameDecoder(role: .client)
        let frame = serverFrame(.text, utf8Bytes("Hello"))
        frame.withUnsafeBytes { decoder.append($0) }
        #expect(decoder.bufferedByteCount == frame.count)
        let header = try decoder.next()
        #expect(header == .header(WebSocketFrameHeader(opcode: .text, payloadLength: 5)))
        let payload = try decoder.next()
        #expect(payload == .payload(utf8Bytes("Hello"), isFrameEnd: true))
    }

    @Test func allowedReservedBitsAreReported() throws {
        let frame = clientFrame(.text, utf8Bytes("x"), reservedBits: WebSocketFrameHeader.rsv1)
        let run = runDecoder([frame], role: .server, allowedReservedBits: WebSocketFrameHeader.rsv1)
        #expect(run.error == nil)
        #expect(run.frames.first?.header.reservedBits == WebSocketFrameHeader.rsv1)
        #expect(run.frames.first?.payload == utf8Bytes("x"))
    }

    @Test func largeStreamOfSmallFramesAcrossCompaction() {
        // Many frames appended at once push the read index past the compaction
        // threshold while data is still buffered.
        var stream = FrameStream()
        for index in 0 ..< 2_000 {
            stream.add(index % 3 == 0 ? .text : .binary, utf8Bytes("frame \(index)"), key: testMaskKey)
        }
        let whole = runDecoder([stream.bytes], role: .server)
        #expect(whole.frames == stream.expected)
        #expect(whole.violations.isEmpty)
        let split = runDecoder(randomSplit(stream.bytes, seed: 3), role: .server)
        #expect(split.frames == stream.expected)
        #expect(split.violations.isEmpty)
    }
}
