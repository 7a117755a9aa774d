import Foundation
import SignalProtocol
import SignalServer
import Testing

#if canImport(Glibc)
    import Glibc
    import TestSupport
#endif

extension SignalingIntegration {
    /// The real `ringd` binary with `calls.onRestart: end`: a burst of calls,
    /// `kill -9`, a restart on the same store; every call a client heard of
    /// is there as it was told, and nothing is left live. Also SIGTERM: exit
    /// 0 and no live call left. With `resume`: RestartResumeTests.
    @Suite("SignalingIntegration: crash recovery (ringd binary)", .blocking)
    struct CrashRecoveryTests {
        static let pairs = 8
        /// Requests as fast as the pairs make them.
        static let limits = ["RINGD_LIMITS_REQUESTS_PER_SECOND": "100000", "RINGD_LIMITS_REQUEST_BURST": "100000"]
        /// Today's behaviour before `resume` became the default.
        static let ending = ["RINGD_CALLS_ON_RESTART": "end"]

        /// One caller/callee pair running initiate → accept → end until the server dies.
        static func runPair(_ index: Int, port: Int, ledger: Ledger) {
            defer { ledger.workerExited() }
            do {
                let caller = try Device.open(port: port, uid: "caller\(index)", deviceId: "c\(index)")
                let callee = try Device.open(port: port, uid: "callee\(index)", deviceId: "e\(index)")
                defer { caller.drop(); callee.drop() }
                func expect(_ call: Snapshot, _ sessionId: String, _ status: CallStatus, _ step: String) throws {
                    ledger.record(call)
                    guard call.sessionId == sessionId, call.status == status else {
                        throw ClientError("pair \(index) \(step): expected \(status), got \(call)")
                    }
                }
                while !ledger.crashed.isSet {
                    let initiated = try caller.initiate(to: "callee\(index)", "video").call()
                    let sessionId = initiated.sessionId
                    try expect(initiated, sessionId, .initiated, "initiate")
                    try expect(try callee.nextEvent(timeout: 10), sessionId, .initiated, "ring")
                    try expect(try callee.accept(sessionId).call(), sessionId, .ongoing, "accept")
                    try expect(try caller.nextEvent(timeout: 10), sessionId, .ongoing, "accepted event")
                    try expect(try caller.end(sessionId).call(), sessionId, .ended, "end")
                    try expect(try callee.nextEvent(timeout: 10), sessionId, .ended, "ended event")
                    ledger.completed()
                }
            } catch {
                ledger.failed("pair \(index): \(error)")
            }
        }

        /// What ringd was killed under: the clients' ledger, and two calls
        /// certainly live then, one ringing and one ongoing (their devices
        /// dropped since, as the crash left them).
        struct KilledBurst {
            let ledger: Ledger
            let ringing: Snapshot
            let held: Snapshot
        }

        /// Places the two certain calls, runs the pairs until `completing`
        /// calls completed, then kills `server` with SIGKILL and waits for
        /// the pairs to stop.
        static func burstThenKill(_ server: RingdProcess, completing: Int) throws -> KilledBurst {
            let ledger = Ledger()
            let r1 = try Device.open(port: server.port, uid: "ringer", deviceId: "r1")
            let r2 = try Device.open(port: server.port, uid: "rung", deviceId: "r2")
            let h1 = try Device.open(port: server.port, uid: "holder", deviceId: "h1")
            let h2 = try Device.open(port: server.port, uid: "held", deviceId: "h2")
            defer { [r1, r2, h1, h2].forEach { $0.drop() } }
            let ringing = try r1.initiate(to: "rung").call()
            ledger.record(ringing)
            ledger.record(try r2.nextEvent())
            let holdId = try h1.initiate(to: "held").call().sessionId
            let held = try h2.accept(holdId).call()
            ledger.record(held)
            ledger.record(try h1.waitForEvent(holdId, .ongoing))

            let port = server.port
            for index in 0 ..< pairs {
                Thread { runPair(index, port: port, ledger: ledger) }.start()
            }
            let enough = waitUntil(timeout: 20) { ledger.completedCount >= completing || ledger.exitedCount == pairs }
            #expect(enough && ledger.completedCount >= completing, "only \(ledger.completedCount) calls completed")
            ledger.crashed.set()
            server.signal(SIGKILL)
            #expect(server.waitForExit(timeout: 10))
            #expect(server.process.termination == .signalled(SIGKILL))
            #expect(waitUntil(timeout: 15) { ledger.exitedCount == pairs }, "burst threads did not stop")
            #expect(ledger.failureList.isEmpty, "failures before the crash: \(ledger.failureList)")
            return KilledBurst(ledger: ledger, ringing: ringing, held: held)
        }

        @Test("onRestart end: kill -9 during a burst, the restart keeps every call as told and closes live ones")
        func killDuringBurst() throws {
            try withRingd(environment: Self.limits.merging(Self.ending) { $1 }) { ringd in
                let burst = try Self.burstThenKill(ringd, completing: 150)
                let (ledger, ringing, held) = (burst.ledger, burst.ringing, burst.held)
                let holdId = held.sessionId
                #expect(ringing.timeout == 30, "RINGD_CALLS_RING_TIMEOUT_SECONDS applies")

                try ringd.restart(samePort: false, environment: Self.ending)
                let told = ledger.statuses
                #expect(told.count >= 152)
                let terminal: Set<String> = ["ended", "rejected", "busy", "cancelled", "unanswered"]
                var restartClosed = 0
                for (sessionId, statuses) in told {
                    let response = try rest(port: ringd.port, "GET", "/v1/calls/\(sessionId)")
                    #expect(response.status == 200, "\(sessionId) told \(statuses) is missing: \(response)")
                    guard let stored = response.json, let call = try? Call(json: stored) else { continue }
                    #expect(call.status.isTerminal, "\(sessionId) is still \(call.status) after the restart")
                    if statuses.contains("ongoing") {
                        #expect(call.acceptedAt != nil, "\(sessionId) was told ongoing but acceptedAt is null")
                    }
                    let heardTerminal = Set(statuses.filter(terminal.contains))
                    #expect(heardTerminal.count <= 1, "\(sessionId): clients heard \(statuses)")
                    if let heard = heardTerminal.first {
                        #expect(
                            call.status.rawValue == heard, "\(sessionId): told \(heard), stored \(stored.serialized)")
                        #expect(call.endReason != .serverRestart)
                    }
                    if call.endReason == .serverRestart {
                        restartClosed += 1
                        #expect(call.status == (call.acceptedAt == nil ? .cancelled : .ended), "\(stored.serialized)")
                        #expect(call.endedBy == nil && call.endedAt != nil)
                    }
                }
                #expect(restartClosed >= 2)
                let ringingNow = try #require(try rest(port: ringd.port, "GET", "/v1/calls/\(ringing.sessionId)").json)
                #expect(
                    ringingNow["status"] == .string("cancelled") && ringingNow["endReason"] == .string("server_restart")
                )
                let heldNow = try #require(try rest(port: ringd.port, "GET", "/v1/calls/\(holdId)").json)
                #expect(heldNow["status"] == .string("ended") && heldNow["endReason"] == .string("server_restart"))
                #expect(heldNow["acceptedAt"] == held.json["acceptedAt"] && heldNow["durationMs"]?.integerValue != nil)
                // The recovery updated the history too (the missed filter reads the stored flag).
                let missed = try rest(port: ringd.port, "GET", "/v1/users/rung/calls?callStatus=missed")
                #expect(sessionIds(missed.json) == [ringing.sessionId], "\(missed)")
                let restartEnded = try rest(port: ringd.port, "GET", "/v1/users/held/calls?callStatus=ended")
                #expect(sessionIds(restartEnded.json) == [holdId])
                // Nobody is in a call on the new server, and it serves calls.
                let holder = try Device.open(port: ringd.port, uid: "holder", deviceId: "h1")
                defer { holder.close() }
                #expect(try holder.activeCall() == nil)
                #expect(try holder.initiate(to: "held").call().status == .initiated)
            }
        }

        @Test("onRestart end: SIGTERM tells devices server_shutdown, ringd exits 0 and leaves no live call")
        func sigterm() throws {
            try withRingd(environment: Self.ending) { ringd in
                let a = try Device.open(port: ringd.port, uid: "alice", deviceId: "a1")
                let b = try Device.open(port: ringd.port, uid: "bob", deviceId: "b1")
                let c = try Device.open(port: ringd.port, uid: "carol", deviceId: "c1")
                let d = try Device.open(port: ringd.port, uid: "dave", deviceId: "d1")
                defer { [a, b, c, d].forEach { $0.close() } }
                let ringingId = try a.initiate(to: "bob").call().sessionId
                _ = try b.waitForEvent(ringingId, .initiated)
                let ongoingId = try c.initiate(to: "dave").call().sessionId
                _ = try d.accept(ongoingId).call()
                _ = try c.waitForEvent(ongoingId, .ongoing)

                ringd.signal(SIGTERM)
                for (device, sessionId, status) in [
                    (a, ringingId, CallStatus.cancelled), (b, ringingId, .cancelled),
                    (c, ongoingId, .ended), (d, ongoingId, .ended),
                ] {
                    #expect(try device.nextClose(timeout: 10) == .goingAway, "\(device)")
                    let event = device.bufferedEvents.last
                    #expect(
                        event?.sessionId == sessionId && event?.status == status && event?.endReason == .serverShutdown,
                        "\(device) heard \(device.bufferedEvents)")
                    device.close()
                }
                #expect(ringd.waitForExit(timeout: 10), "ringd did not exit after SIGTERM")
                #expect(
                    ringd.termination == .exited(0),
                    "ended \(String(describing: ringd.termination)); log: \(ringd.log)")

                try ringd.restart(samePort: false)
                for (sessionId, status) in [(ringingId, "cancelled"), (ongoingId, "ended")] {
                    let stored = try #require(try rest(port: ringd.port, "GET", "/v1/calls/\(sessionId)").json)
                    #expect(
                        stored["status"] == .string(status) && stored["endReason"] == .string("server_shutdown"),
                        "a graceful stop must leave nothing for the restart to close: \(stored.serialized)")
                }
                ringd.signal(SIGTERM)
                #expect(ringd.waitForExit(timeout: 10))
                #expect(ringd.termination == .exited(0))
            }
        }
    }
}
