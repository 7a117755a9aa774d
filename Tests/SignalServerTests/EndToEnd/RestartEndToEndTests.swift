import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two `ringctl` processes in a call while `ringd` is killed and started
/// again on the same store and port (the call survives, both say so, and
/// Ctrl-C then ends it on both sides), or while one of them loses its
/// network (it learns how the call ended when it resumes).
@Suite("EndToEnd: ringctl across a ringd restart and a lost connection", .blocking)
struct RestartEndToEndTests {
    /// The first line of `process` that starts with `prefix`, waited for.
    static func line(_ process: RingctlProcess, startingWith prefix: String, timeout: Double = 15) -> String? {
        var found: String?
        _ = waitUntil(timeout: timeout) {
            found = process.output.first { $0.hasPrefix(prefix) }
            return found != nil
        }
        return found
    }

    /// bob answering once with auto-accept (through `bobPort`), alice
    /// calling him (through `alicePort`), and the `connected · session <id>`
    /// line both printed.
    static func connectedCall(bobPort: Int, alicePort: Int) throws -> (RingctlProcess, RingctlProcess, String) {
        let bob = try RingctlProcess(["--as", "bob", "answer", "--once", "--auto-accept"], port: bobPort)
        #expect(line(bob, startingWith: "waiting for calls") != nil, "bob never waited: \(bob.errorOutput)")
        let alice = try RingctlProcess(["--as", "alice", "call", "bob"], port: alicePort)
        let connected = try #require(line(alice, startingWith: "connected · session "), "\(alice.errorOutput)")
        #expect(line(bob, startingWith: "connected · session ") == connected)
        return (alice, bob, connected)
    }

    /// Cuts `bob`'s connection and refuses his reconnects until `proxy.refusing` is cleared.
    static func keepAway(_ bob: RingctlProcess, behind proxy: TCPProxy) {
        proxy.refusing = true
        proxy.cut()
        #expect(line(bob, startingWith: "lost the connection") != nil, "\(bob.output)")
    }

    @Test("kill -9 of ringd mid-call: both stay connected to the same session, then Ctrl-C hangs up both")
    func callSurvivesKill() throws {
        try withRingd { ringd in
            let port = ringd.port
            let (alice, bob, connected) = try Self.connectedCall(bobPort: port, alicePort: port)

            ringd.signal(SIGKILL)
            #expect(ringd.waitForExit(timeout: 10))
            try ringd.restart()
            for side in [alice, bob] {
                #expect(
                    Self.line(side, startingWith: "reconnected") == "reconnected · " + connected,
                    "\(side.output) \(side.errorOutput)")
            }

            alice.signal(SIGINT)
            #expect(alice.exitStatus() == 0, "\(alice.output) \(alice.errorOutput)")
            #expect(bob.exitStatus() == 0, "\(bob.output) \(bob.errorOutput)")
            let sessionId = String(connected.dropFirst("connected · session ".count))
            let stored = try #require(try SignalingIntegration.rest(port: port, "GET", "/v1/calls/\(sessionId)").json)
            #expect(
                stored["status"] == .string("ended") && stored["endReason"] == .string("hangup")
                    && stored["endedBy"] == .string("alice"), "\(stored.serialized)")
            for side in [alice, bob] {
                let last = side.output.last ?? ""
                #expect(last.hasPrefix("ended · ") && last.hasSuffix(" · by alice (hangup)"), "\(side.output)")
            }
        }
    }

    @Test("bob's network drops while alice hangs up: on resuming bob learns it ended, by alice")
    func endedWhileAway() throws {
        try withRingd { ringd in
            let proxy = try TCPProxy(forwardingTo: ringd.port)
            defer { proxy.stop() }
            let (alice, bob, _) = try Self.connectedCall(bobPort: proxy.port, alicePort: ringd.port)

            Self.keepAway(bob, behind: proxy)
            alice.signal(SIGINT)
            #expect(alice.exitStatus() == 0, "\(alice.output) \(alice.errorOutput)")
            proxy.refusing = false
            #expect(bob.exitStatus() == 0, "\(bob.output) \(bob.errorOutput)")
            let last = bob.output.last ?? ""
            #expect(last.hasPrefix("ended · ") && last.hasSuffix(" · by alice (hangup)"), "\(bob.output)")
            #expect(!bob.output.contains { $0.hasPrefix("reconnected") }, "the resume told bob first: \(bob.output)")
        }
    }

    @Test("a call that came and went while bob's network was down shows as missed when he resumes")
    func missedWhileAway() throws {
        try withRingd { ringd in
            let proxy = try TCPProxy(forwardingTo: ringd.port)
            defer { proxy.stop() }
            let bob = try RingctlProcess(["--as", "bob", "answer"], port: proxy.port)
            #expect(Self.line(bob, startingWith: "waiting for calls") != nil, "bob never waited: \(bob.errorOutput)")

            Self.keepAway(bob, behind: proxy)
            let alice = try RingctlProcess(
                ["--as", "alice", "call", "bob", "--type", "audio", "--timeout", "1"], port: ringd.port)
            #expect(alice.exitStatus() == 5, "\(alice.output) \(alice.errorOutput)")
            let session = try #require(Self.line(alice, startingWith: "ringing bob · session ")).dropFirst(
                "ringing bob · session ".count)
            proxy.refusing = false
            #expect(
                Self.line(bob, startingWith: "missed ")
                    == "missed audio call from alice (unanswered) · session \(session)",
                "\(bob.output)")
            #expect(Self.line(bob, startingWith: "reconnected") == "reconnected", "\(bob.output)")
            bob.signal(SIGINT)
            #expect(bob.exitStatus() == 0, "\(bob.output) \(bob.errorOutput)")
        }
    }
}
