import Foundation
import SignalProtocol
import SignalServer
import SignalSystem
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ringctl` given several servers (nodes of a cluster), comma-separated,
/// in repeated `--server` flags or in `RINGCTL_SERVER`: REST and WebSocket
/// commands skip a node that is down, and a call moves to the next node
/// when its own goes away.
@Suite("EndToEnd: ringctl with several servers", .blocking)
struct RingctlServersEndToEndTests {
    /// `ws://127.0.0.1:PORT`.
    static func url(_ port: Int) -> String { "ws://127.0.0.1:\(port)" }

    @Test("status skips a server that is down, for the REST health and for the WebSocket, and says who answered")
    func statusSkipsDeadServer() throws {
        try withRingd { ringd in
            let dead = try boundLoopbackSocket()
            defer { close(dead.fd) }
            let status = try RingctlProcess(
                ["--as", "alice", "--json", "status"], port: ringd.port,
                server: "\(Self.url(dead.port)),\(Self.url(ringd.port))")
            #expect(status.exitStatus() == 0, "\(status.errorOutput)")
            let health = status.waitForEvent("health", timeout: 0)
            #expect(health?["server"]?.stringValue == "\(Self.url(ringd.port))/v1/ws")
            #expect(health?["health"]?["status"]?.stringValue == "ok")
            #expect(status.waitForEvent("activeCall", timeout: 0)?["uid"]?.stringValue == "alice")
        }
    }

    @Test("repeated --server flags add up, and RINGCTL_SERVER takes the comma form")
    func repeatedFlagsAndVariable() throws {
        try withRingd { ringd in
            let dead = try boundLoopbackSocket()
            defer { close(dead.fd) }
            // The live server only in the middle: were the first or the last
            // flag to win alone, ringctl would reach nothing but the dead one.
            let token = try RingctlProcess(arguments: [
                "--server", Self.url(dead.port), "--server", Self.url(ringd.port),
                "--server", Self.url(dead.port), "token", "bob",
            ])
            #expect(token.exitStatus() == 0, "\(token.errorOutput)")
            #expect(token.output.first?.hasPrefix("v1.") == true, "\(token.output)")

            let logs = try RingctlProcess(
                arguments: ["--as", "alice", "--json", "logs"],
                environment: ["RINGCTL_SERVER": "\(Self.url(dead.port)), \(Self.url(ringd.port))"])
            #expect(logs.exitStatus() == 0, "\(logs.errorOutput)")
            #expect(logs.waitForEvent("logs", timeout: 0)?["count"]?.integerValue == 0)
        }
    }

    /// Answers every request 503, as ringd does at its connection limit.
    final class UnavailableRouter: HTTPRouter {
        func route(_ request: HTTPRequest, from _: SocketAddress) -> HTTPRoute {
            .respond(.error(.serviceUnavailable, "too many connections"))
        }
    }

    @Test("token, revoke and status pass over a server that answers 503, which alone is the failure")
    func skipsUnavailableServer() throws {
        try withRingd { ringd in
            let full = try TestServer { _ in UnavailableRouter() }
            defer { full.stop() }
            let servers = "\(Self.url(full.port)),\(Self.url(ringd.port))"
            let token = try RingctlProcess(["token", "bob"], port: full.port, server: servers)
            #expect(token.exitStatus() == 0, "\(token.errorOutput)")
            #expect(token.output.first?.hasPrefix("v1.") == true, "\(token.output)")
            let revoke = try RingctlProcess(["revoke", "bob"], port: full.port, server: servers)
            #expect(revoke.exitStatus() == 0, "\(revoke.errorOutput)")
            let status = try RingctlProcess(["--json", "status"], port: full.port, server: servers)
            #expect(status.exitStatus() == 0, "\(status.errorOutput)")
            #expect(
                status.waitForEvent("health", timeout: 0)?["server"]?.stringValue == "\(Self.url(ringd.port))/v1/ws")

            let alone = try RingctlProcess(["token", "bob"], port: full.port)
            #expect(alone.exitStatus() == 1)
            #expect(alone.errorOutput.contains("HTTP 503 from ringd: too many connections"), "\(alone.errorOutput)")
        }
    }

    @Test("a bad URL in the list is a usage error naming it; when every server is down, ringctl says so")
    func badAndDeadServers() throws {
        let (firstSocket, secondSocket) = try (boundLoopbackSocket(), boundLoopbackSocket())
        defer { close(firstSocket.fd); close(secondSocket.fd) }
        let (first, second) = (firstSocket.port, secondSocket.port)
        let bad = try RingctlProcess(["status"], port: first, server: "\(Self.url(first)),ws://127.0.0.1:0")
        #expect(bad.exitStatus() == 2)
        #expect(bad.errorOutput.contains(#"bad server URL "ws://127.0.0.1:0": invalid port "0""#), "\(bad.errorOutput)")

        for arguments in [["status"], ["--as", "alice", "logs"]] {
            let down = try RingctlProcess(arguments, port: first, server: "\(Self.url(first)),\(Self.url(second))")
            #expect(down.exitStatus() == 1)
            #expect(
                down.errorOutput.contains("cannot reach ringd at \(Self.url(first)),\(Self.url(second))"),
                "\(down.errorOutput)")
            #expect(down.errorOutput.contains("every server failed: \(Self.url(first))/v1/ws: "), "\(down.errorOutput)")
            #expect(down.errorOutput.contains("; \(Self.url(second))/v1/ws: "), "\(down.errorOutput)")
        }
    }

    @Test("a call goes on through the next server when the node bob is connected to goes away")
    func callMovesToNextServer() throws {
        try withRingd { ringd in
            let one = try TCPProxy(forwardingTo: ringd.port), two = try TCPProxy(forwardingTo: ringd.port)
            defer { one.stop(); two.stop() }
            let bob = try RingctlProcess(
                ["--as", "bob", "answer", "--once", "--auto-accept"], port: one.port,
                server: "\(Self.url(one.port)),\(Self.url(two.port))")
            #expect(RestartEndToEndTests.line(bob, startingWith: "waiting for calls") != nil, "\(bob.errorOutput)")
            let alice = try RingctlProcess(["--as", "alice", "call", "bob"], port: ringd.port)
            let connected = try #require(
                RestartEndToEndTests.line(alice, startingWith: "connected · session "),
                "\(alice.errorOutput)")
            #expect(RestartEndToEndTests.line(bob, startingWith: "connected · session ") == connected)

            one.stop()
            #expect(
                RestartEndToEndTests.line(bob, startingWith: "reconnected")
                    == "reconnected to \(Self.url(two.port))/v1/ws · \(connected)", "\(bob.output) \(bob.errorOutput)")
            alice.signal(SIGINT)
            #expect(alice.exitStatus() == 0, "\(alice.output) \(alice.errorOutput)")
            #expect(bob.exitStatus() == 0, "\(bob.output) \(bob.errorOutput)")
            #expect(bob.output.last?.hasSuffix(" · by alice (hangup)") == true, "\(bob.output)")
        }
    }
}
