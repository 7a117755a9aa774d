import CZlib
import SignalCompression
import SignalProtocol
import TestSupport
import Testing

@Suite("permessage-deflate: round trips", .blocking)
struct DeflateRoundTripTests {
    @Test func theRFCExamplesInflate() throws {
        // RFC 7692 §7.2.3.1 and §7.2.3.2: "Hello", then "Hello" again referring to the first.
        var decompressor = MessageDecompressor(contextTakeover: true, cache: nil)
        let stream =
            compressedFrames(.text, [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
            + compressedFrames(.text, [0xF2, 0x00, 0x11, 0x00, 0x00])
        let run = readDeflated([stream], decompressor: &decompressor)
        #expect(run.error == nil)
        #expect(run.events == [.message(.text("Hello")), .message(.text("Hello"))])
    }

    @Test("messages round-trip with and without context takeover", arguments: [true, false])
    func roundTrip(contextTakeover: Bool) throws {
        let direction = PerMessageDeflateDirection(windowBits: 15, contextTakeover: contextTakeover)
        var compressor = MessageCompressor(direction, cache: nil)
        var decompressor = MessageDecompressor(contextTakeover: contextTakeover, cache: nil)
        var sizes: [Int] = []
        for (index, size) in [0, 1, 300, 300, 5_000, 70_000, 300].enumerated() {
            let payload = index == 5 ? noise(size, seed: 7) : signalingText(index, size: size)
            let compressed = try compressor.compress(payload)
            sizes.append(compressed.count)
            let run = readDeflated([compressedFrames(.binary, compressed)], decompressor: &decompressor)
            #expect(run.error == nil)
            #expect(run.events == [.message(WebSocketMessage(kind: .binary, payload: payload))])
        }
        #expect(sizes[0] == 1)  // an empty message is one 00 byte
        // The same text again is smaller only when the context is kept.
        #expect((sizes[3] < sizes[2]) == contextTakeover)
    }

    @Test("every window size round-trips", arguments: Array(9 ... 15))
    func windowSizes(bits: Int) throws {
        var compressor = MessageCompressor(
            PerMessageDeflateDirection(windowBits: bits, contextTakeover: true), cache: nil)
        var decompressor = MessageDecompressor(contextTakeover: true, cache: nil)
        let payload = signalingText(1, size: 40_000) + noise(3_000, seed: 3) + signalingText(1, size: 40_000)
        for _ in 0 ..< 2 {
            let run = readDeflated(
                [compressedFrames(.binary, try compressor.compress(payload))], decompressor: &decompressor)
            #expect(run.events == [.message(WebSocketMessage(kind: .binary, payload: payload))])
        }
    }

    @Test func anEightBitWindowIsRefusedByTheCompressor() {
        #expect(throws: CompressionError.self) { try DeflateStream(windowBits: 8, memLevel: 8) }
    }

    @Test("fragmented and byte-by-byte", arguments: [1, 2, 7, 300])
    func fragments(count: Int) throws {
        var compressor = MessageCompressor(
            PerMessageDeflateDirection(windowBits: 15, contextTakeover: false), cache: nil)
        let payload = Array("héllo wörld € 😀 ".utf8) + signalingText(3, size: 3_000)
        let frames = compressedFrames(.text, try compressor.compress(payload), fragments: count)
        for chunks in [[frames], frames.map { [$0] }] {
            var decompressor = MessageDecompressor(contextTakeover: false, cache: nil)
            let run = readDeflated(chunks, decompressor: &decompressor)
            #expect(run.error == nil)
            #expect(run.events == [.message(WebSocketMessage(kind: .text, payload: payload))])
        }
    }

    @Test func interleavedConnectionsShareOneCache() throws {
        let cache = CompressionStreamCache(maxIdleInflaters: 1)
        let direction = PerMessageDeflateDirection(windowBits: 15, contextTakeover: false)
        var compressor = MessageCompressor(direction, cache: cache)
        let first = compressedFrames(.binary, try compressor.compress(signalingText(1, size: 2_000)), fragments: 3)
        let second = compressedFrames(.binary, try compressor.compress(signalingText(2, size: 2_000)), fragments: 3)
        var a = MessageDecompressor(contextTakeover: false, cache: cache)
        var b = MessageDecompressor(contextTakeover: false, cache: cache)
        var readerA = WebSocketMessageReader(role: .server, maxMessageBytes: 1 << 20, perMessageDeflate: true)
        var readerB = WebSocketMessageReader(role: .server, maxMessageBytes: 1 << 20, perMessageDeflate: true)
        // Both messages are mid-way at once: each connection holds a stream of its own.
        readerA.append(contentsOf: first.prefix(first.count / 2))
        readerB.append(contentsOf: second.prefix(second.count / 2))
        #expect(try readerA.next(inflater: &a) == nil)
        #expect(try readerB.next(inflater: &b) == nil)
        #expect(a.heldBytes > 0 && b.heldBytes > 0)
        readerA.append(contentsOf: first.dropFirst(first.count / 2))
        readerB.append(contentsOf: second.dropFirst(second.count / 2))
        #expect(
            try readerA.next(inflater: &a)
                == .message(WebSocketMessage(kind: .binary, payload: signalingText(1, size: 2_000))))
        #expect(
            try readerB.next(inflater: &b)
                == .message(WebSocketMessage(kind: .binary, payload: signalingText(2, size: 2_000))))
        #expect(a.heldBytes == 0 && b.heldBytes == 0)
        #expect(compressor.heldBytes == 0)
    }
}

/// A peer may end a message with a final deflate block (RFC 7692 §7.2.3.4);
/// with context takeover its next message may still refer back to it.
@Suite("permessage-deflate: final blocks", .blocking)
struct FinalBlockTests {
    /// Raw deflate of `data` with `dictionary` as the window it may refer
    /// to, ended by a final block (`Z_FINISH`) or a sync flush whose
    /// `00 00 FF FF` is removed, as RFC 7692 sends it.
    private func deflateRaw(_ data: [UInt8], dictionary: [UInt8] = [], final: Bool) throws -> [UInt8] {
        var stream = z_stream()
        #expect(
            deflateInit2_(
                &stream, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        if !dictionary.isEmpty {
            #expect(
                dictionary.withUnsafeBufferPointer { deflateSetDictionary(&stream, $0.baseAddress, uInt($0.count)) }
                    == Z_OK)
        }
        var input = data
        var output = [UInt8](repeating: 0, count: data.count + 1024)
        let produced = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                _ = deflate(&stream, final ? Z_FINISH : Z_SYNC_FLUSH)
                return outBuffer.count - Int(stream.avail_out)
            }
        }
        let bytes = Array(output[..<produced])
        return final ? bytes : Array(bytes.dropLast(4))
    }

    @Test func theRFCFinalBlockExampleInflates() {
        var decompressor = MessageDecompressor(contextTakeover: true, cache: nil)
        let hello: [UInt8] = [0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00]
        let run = readDeflated(
            [compressedFrames(.text, hello) + compressedFrames(.text, hello)], decompressor: &decompressor)
        #expect(run.error == nil)
        #expect(run.events == [.message(.text("Hello")), .message(.text("Hello"))])
    }

    @Test func aFinalBlockKeepsTheWindowForTheNextMessage() throws {
        let text = Array(String(repeating: "ringing bob from alice, session 0123456789abcdef; ", count: 6).utf8)
        // §7.2.3.4: after the final block the sender adds one 00 octet, which with
        // the receiver's 00 00 FF FF makes an empty stored block.
        let first = try deflateRaw(text, final: true) + [0x00]
        let second = try deflateRaw(text, dictionary: text, final: false)
        #expect(second.count < first.count / 2, "the second message refers back to the first")
        var decompressor = MessageDecompressor(contextTakeover: true, cache: nil)
        let run = readDeflated(
            [compressedFrames(.text, first) + compressedFrames(.text, second)], decompressor: &decompressor)
        #expect(run.error == nil)
        #expect(
            run.events == [
                .message(WebSocketMessage(kind: .text, payload: text)),
                .message(WebSocketMessage(kind: .text, payload: text)),
            ])
    }
}
