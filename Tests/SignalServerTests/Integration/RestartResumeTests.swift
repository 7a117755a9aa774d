import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// The real `ringd` binary with `calls.onRestart: resume` (the default):
    /// live calls survive `kill -9` and SIGTERM, their parties come back to
    /// them, and nothing outlives its ring deadline or restart grace.
    @Suite("SignalingIntegration: restart with resume (ringd binary)", .blocking)
    struct RestartResumeTests {
        static let graceSeconds = 4
        static let environment = CrashRecoveryTests.limits.merging(
            ["RINGD_CALLS_RESTART_GRACE_SECONDS": String(graceSeconds)]) { $1 }

        static func wallMillis() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

        /// The stored call `sessionId`, read through the REST API.
        static func stored(_ port: Int, _ sessionId: String) throws -> Call? {
            try rest(port: port, "GET", "/v1/calls/\(sessionId)").json.flatMap { try? Call(json: $0) }
        }

        @Test(
            "kill -9 under load: calls told ongoing go on and end normally, ringing ones ring on, none outlives its grace"
        )
        func killUnderLoad() throws {
            try withRingd(environment: Self.environment) { ringd in
                let burst = try CrashRecoveryTests.burstThenKill(ringd, completing: 100)
                let (ledger, ringing, held) = (burst.ledger, burst.ringing, burst.held)
                let holdId = held.sessionId

                try ringd.restart()
                let ready = Self.wallMillis()

                // The parties of the two certain calls come back within the grace and carry on.
                let h1b = try Device.open(port: ringd.port, uid: "holder", deviceId: "h1")
                let h2b = try Device.open(port: ringd.port, uid: "held", deviceId: "h2")
                let r1b = try Device.open(port: ringd.port, uid: "ringer", deviceId: "r1")
                let r2b = try Device.open(port: ringd.port, uid: "rung", deviceId: "r2")
                defer { [h1b, h2b, r1b, r2b].forEach { $0.close() } }
                let resumedHold = try #require(try h1b.activeCall())
                #expect(resumedHold.sessionId == holdId && resumedHold.status == .ongoing)
                #expect(resumedHold.acceptedBy == "h2" && resumedHold.acceptedAt == held.acceptedAt)
                let hungUp = try h2b.end(holdId).call()
                #expect(hungUp.status == .ended && hungUp.endReason == .hangup && hungUp.endedBy == "held")
                #expect(try h1b.waitForEvent(holdId, .ended).endedBy == "held")
                let stillRinging = try #require(try r2b.activeCall())
                #expect(stillRinging.sessionId == ringing.sessionId && stillRinging.status == .initiated)
                #expect(try r2b.accept(ringing.sessionId).call().status == .ongoing)
                _ = try r1b.waitForEvent(ringing.sessionId, .ongoing)
                #expect(try r1b.end(ringing.sessionId).call().endReason == .hangup)

                // Every other call is as the clients were told; those live at the
                // crash end once the grace passes, as nobody comes back to them.
                let terminal: Set<String> = ["ended", "rejected", "busy", "cancelled", "unanswered"]
                var restored = 0
                for (sessionId, statuses) in ledger.statuses where sessionId != holdId && sessionId != ringing.sessionId
                {
                    var call = try #require(
                        try Self.stored(ringd.port, sessionId), "\(sessionId) told \(statuses) is missing")
                    let heardTerminal = Set(statuses.filter(terminal.contains))
                    #expect(heardTerminal.count <= 1, "\(sessionId): clients heard \(statuses)")
                    if let heard = heardTerminal.first {
                        #expect(call.status.rawValue == heard, "\(sessionId): told \(heard), stored \(call)")
                        continue
                    }
                    if !call.status.isTerminal { restored += 1 }
                    let settled = waitUntil(timeout: Double(Self.graceSeconds) + 10) {
                        call = (try? Self.stored(ringd.port, sessionId)).flatMap { $0 } ?? call
                        return call.status.isTerminal
                    }
                    #expect(settled, "\(sessionId) is still \(call.status) past the restart grace")
                    #expect(call.endReason != .serverRestart, "\(call)")
                    if statuses.contains("ongoing") {
                        #expect(call.acceptedAt != nil, "\(sessionId) lost its accept: \(call)")
                    }
                    if call.endReason == .connectionLost {
                        #expect(call.endedBy == nil)
                        #expect(
                            try #require(call.endedAt) <= ready + Int64(Self.graceSeconds) * 1000 + 2000,
                            "\(sessionId) outlived its restart grace: \(call)")
                    }
                }
                #expect(restored <= CrashRecoveryTests.pairs, "each pair has at most one live call")
                #expect(try h1b.activeCall() == nil && r1b.activeCall() == nil)
            }
        }

        @Test("SIGTERM leaves calls live; the next start restores them and their devices carry on")
        func sigterm() throws {
            try withRingd { ringd in
                let a = try Device.open(port: ringd.port, uid: "alice", deviceId: "a1")
                let b = try Device.open(port: ringd.port, uid: "bob", deviceId: "b1")
                let c = try Device.open(port: ringd.port, uid: "carol", deviceId: "c1")
                let d = try Device.open(port: ringd.port, uid: "dave", deviceId: "d1")
                let ringingId = try a.initiate(to: "bob").call().sessionId
                _ = try b.waitForEvent(ringingId, .initiated)
                let ongoingId = try c.initiate(to: "dave").call().sessionId
                _ = try d.waitForEvent(ongoingId, .initiated)
                let ongoing = try d.accept(ongoingId).call()
                _ = try c.waitForEvent(ongoing.sessionId, .ongoing)

                ringd.signal(SIGTERM)
                for device in [a, b, c, d] {
                    #expect(try device.nextClose(timeout: 10) == .goingAway, "\(device)")
                    #expect(device.bufferedEvents.isEmpty, "a stop that resumes ends no call: \(device.bufferedEvents)")
                    device.close()
                }
                #expect(ringd.waitForExit(timeout: 10), "ringd did not exit after SIGTERM")
                #expect(ringd.termination == .exited(0), "log: \(ringd.log)")

                try ringd.restart()
                let c2 = try Device.open(port: ringd.port, uid: "carol", deviceId: "c1")
                let d2 = try Device.open(port: ringd.port, uid: "dave", deviceId: "d1")
                let b2 = try Device.open(port: ringd.port, uid: "bob", deviceId: "b1")
                defer { [c2, d2, b2].forEach { $0.close() } }
                let restored = try #require(try c2.activeCall())
                #expect(
                    restored.sessionId == ongoing.sessionId && restored.status == .ongoing
                        && restored.acceptedBy == "d1")
                let ended = try d2.end(ongoing.sessionId).call()
                #expect(ended.endReason == .hangup && ended.endedBy == "dave")
                #expect(ended.wireDurationMs == ended.endedAt.map { $0 - (ongoing.acceptedAt ?? 0) })
                #expect(try c2.waitForEvent(ongoing.sessionId, .ended).endedBy == "dave")
                #expect(try b2.activeCall()?.sessionId == ringingId, "the ringing call rings on")
                #expect(try b2.reject(ringingId).call().status == .rejected)
            }
        }

        @Test("restarting again never extends the restart grace; a party that comes back clears its own")
        func graceIsNotExtended() throws {
            try withRingd { server in
                let storePath = server.directory + "/ringd.sqlite"
                func graceDeadline(_ uid: String) throws -> Int64? {
                    try SQLiteDatabase(path: storePath).scalarInt64(
                        "SELECT deadline FROM restart_grace WHERE uid = '\(uid)'")
                }
                let port = server.port
                let a = try Device.open(port: port, uid: "alice", deviceId: "a1")
                let b = try Device.open(port: port, uid: "bob", deviceId: "b1")
                let sessionId = try a.initiate(to: "bob").call().sessionId
                _ = try b.accept(sessionId).call()
                a.drop()
                b.drop()
                #expect(try graceDeadline("alice") == nil, "no grace before a restart")

                server.signal(SIGKILL)
                #expect(server.waitForExit(timeout: 10))
                try server.restart()
                let firstDeadline = try #require(try graceDeadline("alice"))
                #expect(try graceDeadline("bob") == firstDeadline)
                for _ in 0 ..< 2 {
                    server.signal(SIGKILL)
                    #expect(server.waitForExit(timeout: 10))
                    try server.restart()
                    #expect(try graceDeadline("alice") == firstDeadline, "a restart extended the grace")
                }

                let back = try Device.open(port: port, uid: "alice", deviceId: "a1")
                defer { back.close() }
                #expect(try back.activeCall()?.sessionId == sessionId)
                #expect(
                    waitUntil(timeout: 5) { (try? graceDeadline("alice")) == .some(nil) }, "alice's grace stays stored")
                #expect(try graceDeadline("bob") == firstDeadline)
            }
        }
    }
}
