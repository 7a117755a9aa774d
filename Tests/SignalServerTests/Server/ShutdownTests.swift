import Foundation
import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// Graceful shutdown: WebSockets get 1001, the loops exit once peers are gone.
@Suite(.blocking) struct ShutdownTests {
    @Test func shutdownSends1001AndWaitReturnsAfterTheCloseHandshake() throws {
        let server = try TestServer()
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        try socket.send(text: "before")
        #expect(try socket.nextMessage() == .text("before"))

        server.beginShutdown()
        #expect(try socket.nextClose() == .goingAway)
        // The server waits for our close frame: its loops are still running.
        #expect(!server.waitForExit(timeout: 0.2), "the server waits for the close handshake")
        try socket.sendClose(1000)
        #expect(socket.seesEOF(), "the server closes TCP after the close handshake")
        socket.close()
        let start = monotonicSeconds()
        #expect(server.waitForExit(timeout: 2.5), "wait() returns once the peer is gone")
        #expect(monotonicSeconds() - start < 2.5)
        #expect(server.recorder.waitForCloses() == [.normalClosure])
        // Nothing listens any more.
        #expect(throws: TestSocketError.self) { try TestSocket(port: server.port) }
    }

    @Test func shutdownWithoutConnectionsReturnsPromptly() throws {
        let server = try TestServer()
        let start = monotonicSeconds()
        #expect(server.stop(timeout: 5))
        #expect(monotonicSeconds() - start < 1)
    }

    /// `wait()` is documented to block until every loop has exited; once they
    /// have, a second call must return at once.
    @Test func waitReturnsAgainAfterTheLoopsExited() throws {
        let server = try TestServer()
        #expect(server.stop(timeout: 5))
        let done = Flag()
        let inner = server.server
        Thread {
            inner.wait(); done.set()
        }.start()
        #expect(waitUntil(timeout: 2) { done.isSet }, "a second Server.wait() blocks forever")
    }

    @Test func shutdownClosesIdleHTTPConnections() throws {
        let server = try TestServer(ringd: testConfig())
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        #expect(try socket.get("/healthz").status == 200)
        server.beginShutdown()
        #expect(try socket.readUntilEOF() == [])
        socket.close()
        #expect(server.waitForExit(timeout: 2.5))
    }

    @Test func peerThatIgnoresTheCloseIsDroppedAfterTheGracePeriod() throws {
        let server = try TestServer()
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        let start = monotonicSeconds()
        server.beginShutdown()
        #expect(try socket.nextClose() == .goingAway)
        // Never answer: the server drops the connection after its 3 s grace
        // period (before the 5 s WebSocket close timeout), as an abnormal closure.
        #expect(server.waitForExit(timeout: 8))
        let elapsed = monotonicSeconds() - start
        #expect(elapsed >= 2.9, "dropped after \(elapsed)s, before the grace period")
        #expect(elapsed < 8)
        #expect(server.recorder.waitForCloses() == [.abnormalClosure])
        #expect(socket.seesEOF())
    }
}
