import Foundation
import SignalProtocol
import SignalSystem
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// Pipelined requests whose answers are deferred (as store-backed REST
/// answers are): all are answered in order, and the connection does not read
/// ahead while an answer is pending, so what it buffers stays bounded.
@Suite(.blocking) struct PipeliningTests {
    /// The most request bytes a connection had buffered when an answer was due.
    final class Peak: Sendable {
        private let value = Atomic<Int>(0)
        func record(_ bytes: Int) { _ = value.max(bytes, ordering: .relaxed) }
        var bytes: Int { value.load(ordering: .relaxed) }
    }

    /// Answers every request later, with its path, after noting how many
    /// bytes the connection holds.
    final class DeferringRouter: HTTPRouter {
        private let peak: Peak
        init(peak: Peak) { self.peak = peak }

        func route(_ request: HTTPRequest, from _: SocketAddress) -> HTTPRoute {
            let path = request.target, peak = self.peak
            return .later { sink in
                // A loop pass later, as the store's answer would come.
                sink.mailbox.submit { loop in
                    if let handler = sink.handler.value(on: loop) { peak.record(handler.bufferedInputBytes) }
                    sink.send(.json(.ok, .object([("path", .string(path))])))
                }
            }
        }
    }

    @Test func pipelinedDeferredRequestsAreAnsweredInOrderWithBoundedBuffering() throws {
        let peak = Peak()
        let server = try TestServer { _ in DeferringRouter(peak: peak) }
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        let count = 10_000
        var requests: [UInt8] = []
        for index in 0 ..< count {
            requests += Array("GET /v1/users/alice/calls?n=\(index) HTTP/1.1\r\nHost: test\r\n\r\n".utf8)
        }
        #expect(requests.count > 500_000)
        // Sent from another thread: the server answers while it takes them.
        let fd = dup(socket.fd)
        let sent = DispatchSemaphore(value: 0)
        Thread { [requests] in
            var offset = 0
            while offset < requests.count {
                let result = requests.withUnsafeBytes {
                    send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
                }
                if result <= 0 { break }
                offset += result
            }
            close(fd)
            sent.signal()
        }.start()
        for index in 0 ..< count {
            let response = try socket.readResponse(timeout: 10)
            #expect(response.status == 200)
            guard try jsonBody(response)["path"] == .string("/v1/users/alice/calls?n=\(index)") else {
                Issue.record("response \(index) out of order")
                break
            }
        }
        #expect(sent.wait(timeout: .now() + 10) == .success)
        // One read of the loop's buffer beyond a partial request at most.
        #expect(peak.bytes <= 64 * 1024 + 8 * 1024, "\(peak.bytes) request bytes buffered")
    }
}
