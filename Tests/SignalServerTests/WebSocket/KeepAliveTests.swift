import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// Keep-alive pings, the ping timeout and the handshake timeout.
@Suite(.blocking) struct DeadlineTests {
    private func pingingServer() throws -> TestServer {
        try TestServer(
            config: testConfig {
                $0.pingInterval = 0.2
                $0.pingTimeout = 0.6
            })
    }

    @Test func silentClientIsPingedThenClosedWith1001() throws {
        let server = try pingingServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        let start = monotonicSeconds()
        var pings = 0
        var closeCode: WebSocketCloseCode??
        while closeCode == nil {
            switch try socket.nextEvent(timeout: 3) {
            case .ping(let payload):
                #expect(payload.isEmpty)
                pings += 1
            case .close(let code, _):
                closeCode = code
            case nil:
                Issue.record("TCP closed before a close frame")
                return
            case let other:
                Issue.record("unexpected \(String(describing: other))")
            }
        }
        let elapsed = monotonicSeconds() - start
        #expect(pings >= 1, "pinged before being dropped")
        #expect(closeCode == .goingAway)
        #expect(socket.seesEOF(within: 3))
        #expect(elapsed >= 0.55, "dropped after \(elapsed)s, before the 0.6s ping timeout")
        #expect(elapsed < 3, "dropped only after \(elapsed)s")
        #expect(server.recorder.waitForCloses() == [.goingAway])
    }

    @Test func clientAnsweringPingsStaysConnected() throws {
        let server = try pingingServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        let end = monotonicSeconds() + 1.5
        var pings = 0
        while true {
            let left = end - monotonicSeconds()
            if left <= 0 { break }
            let event: WebSocketMessageReader.Event?
            do {
                event = try socket.nextEvent(timeout: left)
            } catch is TestSocketError {
                break  // quiet until the end: fine
            }
            switch event {
            case .ping(let payload):
                pings += 1
                try socket.send(.pong, payload)
            case let other:
                Issue.record("unexpected \(String(describing: other)) while answering pings")
                return
            }
        }
        #expect(pings >= 2, "the server pinged a quiet client (\(pings) pings)")
        try socket.send(text: "still alive")
        // Pings may still arrive before the echo; answer them.
        while true {
            switch try socket.nextEvent() {
            case .ping(let payload): try socket.send(.pong, payload)
            case let event:
                #expect(event == .message(.text("still alive")))
                #expect(server.recorder.closeCodes.isEmpty)
                return
            }
        }
    }

    @Test func trafficFromThePeerCountsAsSignOfLife() throws {
        // Traffic from the peer counts as a sign of life: messages every 50 ms
        // keep the connection open past the timeout without any pong.
        let server = try pingingServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        let end = monotonicSeconds() + 1.2
        var sent = 0
        while monotonicSeconds() < end {
            try socket.send(text: "tick \(sent)")
            sent += 1
            var echoed = false
            while !echoed {
                switch try socket.nextEvent(timeout: 2) {
                case .message(let message):
                    #expect(message == .text("tick \(sent - 1)"))
                    echoed = true
                case .ping: continue
                case let other:
                    Issue.record("unexpected \(String(describing: other))")
                    return
                }
            }
            _ = socket.socket.staysQuiet(for: 0.05)
        }
        #expect(server.recorder.closeCodes.isEmpty)
    }

    @Test func connectionSendingNothingIsClosedAfterHandshakeTimeout() throws {
        let server = try TestServer(config: testConfig { $0.handshakeTimeout = 0.3 })
        defer { server.stop() }
        let start = monotonicSeconds()
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        #expect(try socket.readUntilEOF(timeout: 3) == [], "closed without a response")
        let elapsed = monotonicSeconds() - start
        #expect(elapsed >= 0.29, "closed after \(elapsed)s, before the 0.3s timeout")
        #expect(elapsed < 2.5, "closed only after \(elapsed)s")
        // The server lingers for our FIN (or aborts after Connection.closeTimeout,
        // 5 s, too close to any bound here): send it, and the connection goes.
        socket.close()
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 0 })
    }

    @Test func upgradedConnectionIsNotSubjectToTheHandshakeTimeout() throws {
        let server = try TestServer(config: testConfig { $0.handshakeTimeout = 0.3 })
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        #expect(socket.socket.staysQuiet(for: 0.6))
        try socket.send(text: "late")
        #expect(try socket.nextMessage() == .text("late"))
    }
}
