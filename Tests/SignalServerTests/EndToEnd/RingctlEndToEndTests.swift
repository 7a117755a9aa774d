import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ringd` and `ringctl` as separate processes, the way users run them: every
/// outcome's exit code on both sides, the session id both print, `--json`
/// lines that parse, and the call log rows each side then sees.
@Suite("EndToEnd: ringctl", .blocking)
struct RingctlEndToEndTests {
    /// A callee running `answer --once --json` with `flags`, once it waits for calls.
    private func callee(_ flags: [String], port: Int) throws -> RingctlProcess {
        let callee = try RingctlProcess(["--as", "bob", "--json", "answer", "--once"] + flags, port: port)
        #expect(callee.waitForEvent("waiting") != nil, "callee never waited: \(callee.errorOutput)")
        return callee
    }

    /// The newest call log row of `uid`, via `ringctl logs --json`.
    private func newestLog(_ uid: String, port: Int) throws -> JSONValue {
        let logs = try RingctlProcess(["--as", uid, "--json", "logs", "--limit", "1"], port: port)
        #expect(logs.exitStatus() == 0, "\(logs.errorOutput)")
        let row = try #require(logs.jsonLines.first { $0["event"]?.stringValue == "log" }, "no log row for \(uid)")
        return try #require(row["log"])
    }

    /// Checks the newest row of both parties: same call, the status, the
    /// direction, and whether bob missed it.
    private func expectLogs(port: Int, sessionId: String?, status: String, bobMissed: Bool) throws {
        let alice = try newestLog("alice", port: port), bob = try newestLog("bob", port: port)
        for (row, direction) in [(alice, "outgoing"), (bob, "incoming")] {
            #expect(row["status"]?.stringValue == status)
            #expect(row["direction"]?.stringValue == direction)
            if let sessionId { #expect(row["sessionId"]?.stringValue == sessionId) }
        }
        #expect(alice["missed"]?.boolValue == false)
        #expect(bob["missed"]?.boolValue == bobMissed)
    }

    /// Every stdout line of a `--json` run is one JSON object.
    private func expectJSONOnly(_ process: RingctlProcess) {
        #expect(!process.output.isEmpty)
        #expect(process.jsonLines.count == process.output.count, "non-JSON lines: \(process.output)")
    }

    @Test("accepted and hung up: both land on one session id and exit 0")
    func accepted() throws {
        try withRingd { ringd in
            let bob = try callee(["--auto-accept", "--hangup-after", "1"], port: ringd.port)
            let alice = try RingctlProcess(["--as", "alice", "--json", "call", "bob"], port: ringd.port)
            #expect(alice.exitStatus() == 0, "\(alice.errorOutput)")
            #expect(bob.exitStatus() == 0, "\(bob.errorOutput)")
            let session = alice.waitForEvent("connected", timeout: 0)?["sessionId"]?.stringValue
            #expect(session != nil)
            #expect(bob.waitForEvent("connected", timeout: 0)?["sessionId"]?.stringValue == session)
            #expect(alice.waitForEvent("ended", timeout: 0)?["outcome"]?.stringValue == "ended")
            expectJSONOnly(alice)
            expectJSONOnly(bob)
            try expectLogs(port: ringd.port, sessionId: session, status: "ended", bobMissed: false)
        }
    }

    @Test("--json shows what the other device in the call relays with signal, payload and all")
    func showsSignals() throws {
        try withRingd { ringd in
            let bob = try callee(["--auto-accept"], port: ringd.port)
            let alice = try SignalingIntegration.Device.open(port: ringd.port, uid: "alice", deviceId: "a-browser")
            defer { alice.close() }
            let sessionId = try alice.initiate(to: "bob", "video").call().sessionId
            _ = try alice.waitForEvent(sessionId, .ongoing)
            let offer = JSONValue.object([
                ("kind", .string("offer")), ("sdp", .string("v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n")),
            ])
            #expect(try alice.signal(sessionId, offer).data?["delivered"] == .bool(true))
            let shown = try #require(bob.waitForEvent("signal"), "no signal event: \(bob.output)")
            #expect(shown["sessionId"]?.stringValue == sessionId)
            #expect(shown["from"] == .object([("uid", .string("alice")), ("deviceId", .string("a-browser"))]))
            #expect(shown["payload"] == offer)
            _ = try alice.end(sessionId)
            #expect(bob.exitStatus() == 0, "\(bob.errorOutput)")
            expectJSONOnly(bob)
        }
    }

    @Test(
        "declined: rejected exits 3 and busy exits 4 on both sides, and both are logged",
        arguments: [
            (["--auto-reject"], "rejected", Int32(3), false),
            (["--busy"], "busy", Int32(4), true),
        ])
    func declined(flags: [String], status: String, exitCode: Int32, missed: Bool) throws {
        try withRingd { ringd in
            let bob = try callee(flags, port: ringd.port)
            let alice = try RingctlProcess(["--as", "alice", "--json", "call", "bob"], port: ringd.port)
            #expect(alice.exitStatus() == exitCode, "\(alice.errorOutput)")
            #expect(bob.exitStatus() == exitCode, "\(bob.errorOutput)")
            #expect(alice.waitForEvent("ended", timeout: 0)?["outcome"]?.stringValue == status)
            expectJSONOnly(alice)
            let session = alice.waitForEvent("ringing", timeout: 0)?["call"]?["sessionId"]?.stringValue
            try expectLogs(port: ringd.port, sessionId: session, status: status, bobMissed: missed)
        }
    }

    @Test("--reason: the caller hears why, in its line and in the call")
    func declinedWithAReason() throws {
        try withRingd { ringd in
            let bob = try callee(["--auto-reject", "--reason", "In a meeting"], port: ringd.port)
            let alice = try RingctlProcess(["--as", "alice", "call", "bob"], port: ringd.port)
            #expect(alice.exitStatus() == 3, "\(alice.errorOutput)")
            #expect(bob.exitStatus() == 3, "\(bob.errorOutput)")
            #expect(alice.output.last == #"rejected by bob · "In a meeting""#, "\(alice.output)")
            let ended = bob.waitForEvent("ended", timeout: 0)
            #expect(ended?["call"]?["rejectReason"]?.stringValue == "In a meeting", "\(bob.output)")
            let usage = try RingctlProcess(
                ["--as", "bob", "answer", "--reason", String(repeating: "x", count: 141)], port: ringd.port)
            #expect(usage.exitStatus() == 2 && usage.errorOutput.contains("--reason must be 1 to 140 characters"))
        }
    }

    /// Run again with the same --client-call-id, ringctl follows the call
    /// the first run placed (here rejected, within its ring timeout)
    /// instead of ringing bob again; a malformed id is a usage error.
    @Test("--client-call-id: a second run with the same id reports the first run's call")
    func clientCallId() throws {
        try withRingd { ringd in
            let bob = try callee(["--auto-reject"], port: ringd.port)
            let first = try RingctlProcess(
                ["--as", "alice", "--json", "call", "bob", "--client-call-id", "standup-42"], port: ringd.port)
            #expect(first.exitStatus() == 3, "\(first.errorOutput)")
            #expect(bob.exitStatus() == 3, "\(bob.errorOutput)")
            let placed = try #require(first.waitForEvent("ended", timeout: 0)?["call"])
            #expect(placed["clientCallId"] == .string("standup-42"))

            let second = try RingctlProcess(
                ["--as", "alice", "--json", "call", "bob", "--client-call-id", "standup-42"], port: ringd.port)
            #expect(second.exitStatus() == 3, "\(second.errorOutput)")
            #expect(second.waitForEvent("ended", timeout: 0)?["call"]?["sessionId"] == placed["sessionId"])
            let history = try RingctlProcess(["--as", "alice", "--json", "logs"], port: ringd.port)
            #expect(history.exitStatus() == 0)
            #expect(history.jsonLines.filter { $0["event"]?.stringValue == "log" }.count == 1, "\(history.output)")

            let usage = try RingctlProcess(
                ["--as", "alice", "call", "bob", "--client-call-id", "two words"], port: ringd.port)
            #expect(usage.exitStatus() == 2)
            #expect(usage.errorOutput.contains("--client-call-id must be 1 to 64 characters"), "\(usage.errorOutput)")
        }
    }

    @Test("unanswered: a short --timeout exits 5, bob missed it")
    func unanswered() throws {
        try withRingd { ringd in
            let alice = try RingctlProcess(
                ["--as", "alice", "--json", "call", "bob", "--timeout", "1"], port: ringd.port)
            #expect(alice.exitStatus() == 5, "\(alice.errorOutput)")
            #expect(alice.waitForEvent("ended", timeout: 0)?["outcome"]?.stringValue == "unanswered")
            try expectLogs(port: ringd.port, sessionId: nil, status: "unanswered", bobMissed: true)
        }
    }

    @Test("a fractional --timeout rings for milliseconds (timeoutMs) and says so; out of range is a usage error")
    func fractionalTimeout() throws {
        try withRingd { ringd in
            let alice = try RingctlProcess(["--as", "alice", "call", "bob", "--timeout", "0.2"], port: ringd.port)
            #expect(alice.exitStatus() == 5, "\(alice.errorOutput)")
            #expect(
                alice.output.contains("bob has no device online; ringing until the timeout (0.2 s)"), "\(alice.output)")
            #expect(alice.output.last == "no answer after 0.2 s", "\(alice.output)")
            let json = try RingctlProcess(
                ["--as", "alice", "--json", "call", "bob", "--timeout", "0.25"], port: ringd.port)
            #expect(json.exitStatus() == 5, "\(json.errorOutput)")
            #expect(json.waitForEvent("ringing", timeout: 0)?["call"]?["timeoutMs"] == .integer(250))
            for refused in ["0.01", "300.5", "-1", "soon"] {
                let usage = try RingctlProcess(
                    ["--as", "alice", "call", "bob", "--timeout", refused], port: ringd.port)
                #expect(usage.exitStatus() == 2, "\(refused)")
                #expect(usage.errorOutput.contains("--timeout needs a number of seconds"), "\(usage.errorOutput)")
            }
        }
    }

    @Test("cancelled: Ctrl-C while ringing tells the server, exits 6, bob missed it")
    func cancelled() throws {
        try withRingd { ringd in
            let alice = try RingctlProcess(["--as", "alice", "--json", "call", "bob"], port: ringd.port)
            let ringing = try #require(alice.waitForEvent("ringing"), "\(alice.errorOutput)")
            alice.signal(SIGINT)
            #expect(alice.exitStatus() == 6, "\(alice.errorOutput)")
            #expect(alice.waitForEvent("ended", timeout: 0)?["outcome"]?.stringValue == "cancelled")
            try expectLogs(
                port: ringd.port, sessionId: ringing["call"]?["sessionId"]?.stringValue,
                status: "cancelled", bobMissed: true)
        }
    }

    @Test("errors are one line with the server's code, and usage errors exit 2")
    func errors() throws {
        try withRingd { ringd in
            let selfCall = try RingctlProcess(["--as", "alice", "call", "alice"], port: ringd.port)
            #expect(selfCall.exitStatus() == 1)
            #expect(selfCall.errorOutput.contains("ERR_CALLING_SELF"))
            #expect(selfCall.errorOutput.split(separator: "\n").count == 1)
            let usage = try RingctlProcess(["--as", "alice", "call", "bob", "--no-such-flag"], port: ringd.port)
            #expect(usage.exitStatus() == 2)
            let unreachable = try RingctlProcess(["--as", "alice", "call", "bob"], port: 1)
            #expect(unreachable.exitStatus() == 1)
            #expect(unreachable.errorOutput.contains("cannot reach ringd"))
        }
    }
}
