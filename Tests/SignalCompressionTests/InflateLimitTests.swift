import SignalCompression
import SignalProtocol
import TestSupport
import Testing

@Suite("permessage-deflate: the inflated-size cap", .blocking)
struct InflateLimitTests {
    /// 8 MB of zeros: about 8 KB compressed.
    static let bomb: [UInt8] = {
        let stream = try? DeflateStream(windowBits: 15, memLevel: 8)
        return (try? stream?.compressMessage([UInt8](repeating: 0, count: 8 << 20))) ?? []
    }()

    @Test func aSmallFrameThatInflatesToMegabytesFailsWith1009() {
        #expect(Self.bomb.count > 0 && Self.bomb.count < 16 * 1024)
        for fragments in [1, 5] {
            var decompressor = MessageDecompressor(contextTakeover: false, cache: nil)
            let run = readDeflated(
                [compressedFrames(.binary, Self.bomb, fragments: fragments)], decompressor: &decompressor,
                maxMessageBytes: 65_536)
            #expect(run.error?.closeCode == .messageTooBig)
            #expect(run.events.isEmpty)
        }
    }

    @Test func theOutputNeverReservesBeyondTheCap() throws {
        let stream = try InflateStream()
        var output: [UInt8] = []
        #expect(throws: CompressionError(.messageTooBig, "message inflates beyond 65536 bytes")) {
            try stream.inflate(Self.bomb, into: &output, limit: 65_536)
        }
        #expect(output.count <= 65_536)
        #expect(output.capacity < 65_536 + 4_096)
    }

    @Test func aMessageExactlyAtTheCapPasses() throws {
        let deflater = try DeflateStream(windowBits: 15, memLevel: 8)
        let payload = signalingText(0, size: 65_536)
        var decompressor = MessageDecompressor(contextTakeover: false, cache: nil)
        let run = readDeflated(
            [compressedFrames(.binary, try deflater.compressMessage(payload))], decompressor: &decompressor,
            maxMessageBytes: 65_536)
        #expect(run.error == nil)
        #expect(run.events == [.message(WebSocketMessage(kind: .binary, payload: payload))])
    }

    @Test func corruptDataFailsWith1007() {
        var decompressor = MessageDecompressor(contextTakeover: false, cache: nil)
        let run = readDeflated([compressedFrames(.binary, [0xFF, 0xFF, 0xFF, 0xFF])], decompressor: &decompressor)
        #expect(run.error?.closeCode == .invalidPayload)
    }
}

@Suite("permessage-deflate: memory held per connection", .blocking)
struct CompressionMemoryTests {
    @Test func withoutContextTakeoverAnIdleConnectionHoldsNoStream() throws {
        let cache = CompressionStreamCache()
        let direction = PerMessageDeflateDirection(windowBits: 15, contextTakeover: false)
        var compressor = MessageCompressor(direction, cache: cache)
        var decompressor = MessageDecompressor(contextTakeover: false, cache: cache)
        let run = readDeflated(
            [compressedFrames(.binary, try compressor.compress(signalingText(0, size: 4_000)))],
            decompressor: &decompressor)
        #expect(run.events.count == 1)
        #expect(compressor.heldBytes == 0)
        #expect(decompressor.heldBytes == 0)
        // The thread's shared streams: one compressor (256 KB + state) and the recycled decompressor.
        #expect(cache.allocatedBytes > 262_144 && cache.allocatedBytes < 262_144 + 60_000)
    }

    @Test func withContextTakeoverAConnectionHoldsItsTwoStreams() throws {
        let direction = PerMessageDeflateDirection(windowBits: 15, contextTakeover: true)
        var compressor = MessageCompressor(direction, cache: nil)
        var decompressor = MessageDecompressor(contextTakeover: true, cache: nil)
        _ = readDeflated(
            [compressedFrames(.binary, try compressor.compress(signalingText(0, size: 4_000)))],
            decompressor: &decompressor)
        // Compressor: 2^17 window and prev + 2^15 (memLevel 6) + state; decompressor: 32 KB window + state.
        #expect(compressor.heldBytes > 163_840 && compressor.heldBytes < 175_000)
        #expect(decompressor.heldBytes > 32_768 && decompressor.heldBytes < 45_000)
    }

    @Test func aSmallerAgreedWindowShrinksTheCompressor() throws {
        var compressor = MessageCompressor(
            PerMessageDeflateDirection(windowBits: 10, contextTakeover: true), cache: nil)
        _ = try compressor.compress([1, 2, 3])
        #expect(compressor.heldBytes < 48_000)
    }
}
