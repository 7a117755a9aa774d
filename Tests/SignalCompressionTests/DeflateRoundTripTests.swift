import SignalCompression
import SignalProtocol
import Testing

@Suite("permessage-deflate: round trips")
struct DeflateRoundTripTests {
    @Test func theRFCExamplesInflate() throws {
        // RFC 7692 §7.2.3.1 and §7.2.3.2: "Hello", then "Hello" again referring to the first.
        var decompressor = MessageDecompressor(contextTakeover: true, cache: nil)
        let stream = compressedFrames(.text, [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
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
        #expect(sizes[0] == 1) // an empty message is one 00 byte
        // The same text again is smaller only when the context is kept.
        #expect((sizes[3] < sizes[2]) == contextTakeover)
    }

    @Test("every window size round-trips", arguments: Array(9 ... 15))
    func windowSizes(bits: Int) throws {
        var compressor = MessageCompressor(PerMessageDeflateDirection(windowBits: bits, contextTakeover: true), cache: nil)
        var decompressor = MessageDecompressor(contextTakeover: true, cache: nil)
        let payload = signalingText(1, size: 40_000) + noise(3_000, seed: 3) + signalingText(1, size: 40_000)
        for _ in 0 ..< 2 {
            let run = readDeflated([compressedFrames(.binary, try compressor.compress(payload))], decompressor: &decompressor)
            #expect(run.events == [.message(WebSocketMessage(kind: .binary, payload: payload))])
        }
    }

    @Test func anEightBitWindowIsRefusedByTheCompressor() {
        #expect(throws: CompressionError.self) { try DeflateStream(windowBits: 8, memLevel: 8) }
    }

    @Test("fragmented and byte-by-byte", arguments: [1, 2, 7, 300])
    func fragments(count: Int) throws {
        var compressor = MessageCompressor(PerMessageDeflateDirection(windowBits: 15, contextTakeover: false), cache: nil)
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
        #expect(try readerA.next(inflater: &a) == .message(WebSocketMessage(kind: .binary, payload: signalingText(1, size: 2_000))))
        #expect(try readerB.next(inflater: &b) == .message(WebSocketMessage(kind: .binary, payload: signalingText(2, size: 2_000))))
        #expect(a.heldBytes == 0 && b.heldBytes == 0)
        #expect(compressor.heldBytes == 0)
    }
}
