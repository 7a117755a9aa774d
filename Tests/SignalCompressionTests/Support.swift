import SignalCompression
import SignalProtocol
import Testing

/// JSON-like text that compresses well and repeats across messages.
func signalingText(_ index: Int, size: Int) -> [UInt8] {
    var text = ""
    var item = index
    while text.utf8.count < size {
        text +=
            "{\"type\":\"call\",\"call\":{\"sessionId\":\"s-\(item)\",\"status\":\"ringing\",\"receiverId\":\"bob\"}},"
        item += 1
    }
    return Array(text.utf8.prefix(size))
}

/// Pseudo-random bytes that do not compress.
func noise(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    return (0 ..< count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}

/// A client frame (masked) with RSV1, split into `fragments` frames.
func compressedFrames(_ opcode: WebSocketOpcode, _ payload: [UInt8], fragments: Int = 1) -> [UInt8] {
    let size = max(1, (payload.count + fragments - 1) / fragments)
    var frames: [UInt8] = []
    var start = 0
    var first = true
    repeat {
        let end = min(payload.count, start + size)
        frames += WebSocketFrameEncoder.frame(
            first ? opcode : .continuation, payload: Array(payload[start ..< end]),
            fin: end == payload.count, reservedBits: first ? WebSocketFrameHeader.rsv1 : 0,
            maskKey: WebSocketMaskKey(1, 2, 3, 4))
        first = false
        start = end
    } while start < payload.count
    return frames
}

/// Feeds `chunks` to a server reader with permessage-deflate and `decompressor`;
/// returns the events until the first error, and the error.
func readDeflated(
    _ chunks: [[UInt8]], decompressor: inout MessageDecompressor,
    maxMessageBytes: Int = 1 << 20
) -> (events: [WebSocketMessageReader.Event], error: WebSocketProtocolError?) {
    var reader = WebSocketMessageReader(role: .server, maxMessageBytes: maxMessageBytes, perMessageDeflate: true)
    var events: [WebSocketMessageReader.Event] = []
    for chunk in chunks {
        reader.append(contentsOf: chunk)
        do {
            while let event = try reader.next(inflater: &decompressor) { events.append(event) }
        } catch {
            return (events, error)
        }
    }
    return (events, nil)
}
