import Foundation
import SignalProtocol
import TestSupport
import Testing

/// The built ringd answers each ping with its pong, in order, to a client
/// that reads (RFC 6455 §5.5.2–3), whether the pings come one per write or
/// many in one.
@Suite("EndToEnd: a pong per ping", .blocking)
struct PingEndToEndTests {
    @Test(arguments: [1, 50])
    func everyPingGetsItsPongInOrder(pingsPerWrite: Int) throws {
        try withRingd { ringd in
            let socket = try TestWebSocket.connect(port: ringd.port)
            let count = 500
            var sent = 0
            while sent < count {
                var bytes: [UInt8] = []
                for index in sent ..< min(count, sent + pingsPerWrite) {
                    bytes += WebSocketFrameEncoder.frame(.ping, payload: Array("p\(index)".utf8), maskKey: .random())
                }
                try socket.socket.send(bytes)
                sent += pingsPerWrite
            }
            var pongs: [String] = []
            while pongs.count < count {
                guard case .pong(let payload)? = try socket.nextEvent() else { break }
                pongs.append(String(decoding: payload, as: UTF8.self))
            }
            #expect(pongs == (0 ..< count).map { "p\($0)" })
        }
    }
}
