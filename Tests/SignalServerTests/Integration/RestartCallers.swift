import Foundation
import SignalProtocol
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension SignalingIntegration {
    /// Caller/callee pairs placing calls back to back, one thread each,
    /// while the test kills ringd and the held socket gets a new one. A pair
    /// whose call a kill interrupted reconnects and places the call again;
    /// every refused connect (ECONNREFUSED) is counted.
    final class RestartCallers: Sendable {
        /// What the pairs saw.
        struct Counts: CustomStringConvertible {
            /// Connects refused (ECONNREFUSED).
            var refused = 0
            /// Calls that failed other than through a kill (a protocol
            /// error, a timeout, a refused connect outside a kill).
            var failed = 0
            /// Calls both parties saw end.
            var completed = 0
            /// Calls a kill interrupted (each counted once, however many kills it met).
            var interrupted = 0
            /// Interrupted calls placed again after reconnecting, and completed.
            var retried = 0

            var description: String {
                "refused \(refused), failed \(failed), completed \(completed) (\(retried) of them placed again after a reconnect), interrupted \(interrupted)"
            }
        }

        let pairs: Int
        let port: Int
        private let counts = Mutex(Counts())
        private let failures = Mutex<[String]>([])
        /// Kills announced by ``killStarting()`` and ended by ``killDone()``.
        private let kills = Mutex((started: 0, done: 0))
        private let stopping = Flag()
        private let exited = Atomic<Int>(0)

        init(pairs: Int, port: Int) {
            self.pairs = pairs
            self.port = port
        }

        /// Starts the pairs' threads.
        func start() {
            for index in 0 ..< pairs {
                Thread { self.run(index) }.start()
            }
        }

        /// ringd is about to be killed: failures from now on may be its doing.
        func killStarting() { kills.withLock { $0.started += 1 } }

        /// The killed ringd was replaced (the next run reported its pid).
        func killDone() { kills.withLock { $0.done += 1 } }

        var snapshot: Counts { counts.withLock { $0 } }
        var failureList: [String] { failures.withLock { $0 } }

        /// Whether `condition` held of the counts within `timeout` seconds.
        func wait(timeout: Double, until condition: (Counts) -> Bool) -> Bool {
            waitUntil(timeout: timeout) { condition(snapshot) }
        }

        /// Lets every pair finish the call it is placing and waits for the
        /// threads; whether they all ended within `timeout` seconds.
        @discardableResult
        func stop(timeout: Double) -> Bool {
            stopping.set()
            return waitUntil(timeout: timeout) { exited.load(ordering: .acquiring) == pairs }
        }

        private func run(_ index: Int) {
            defer { exited.add(1, ordering: .releasing) }
            var devices: (caller: Device, callee: Device)?
            defer { devices.map { $0.caller.drop(); $0.callee.drop() } }
            var placingAgain = false
            while !stopping.isSet {
                let mark = kills.withLock { $0 }
                do {
                    if devices == nil {
                        devices = try connect(index)
                        if placingAgain { try endLeftover(devices!.caller) }
                    }
                    try placeCall(devices!, index)
                    counts.withLock { counts in
                        counts.completed += 1
                        if placingAgain { counts.retried += 1 }
                    }
                    placingAgain = false
                } catch {
                    devices.map { $0.caller.drop(); $0.callee.drop() }
                    devices = nil
                    let refused = (error as? TestSocketError)?.code == ECONNREFUSED
                    let now = kills.withLock { $0 }
                    // A kill started during the attempt, or one was under way
                    // when it began (its connections may have met the dying ringd).
                    let killed = now.started != mark.started || mark.started != mark.done
                    counts.withLock { counts in
                        if refused { counts.refused += 1 }
                        if killed && !placingAgain { counts.interrupted += 1 }
                        if !killed { counts.failed += 1 }
                    }
                    guard killed else {
                        failures.withLock { $0.append("pair \(index): \(error)") }
                        return
                    }
                    placingAgain = true
                }
            }
        }

        private func connect(_ index: Int) throws -> (caller: Device, callee: Device) {
            let caller = try Device.open(port: port, uid: "restart-caller-\(index)", deviceId: "c\(index)")
            do {
                return (caller, try Device.open(port: port, uid: "restart-callee-\(index)", deviceId: "e\(index)"))
            } catch {
                caller.drop()
                throw error
            }
        }

        /// Ends the interrupted call if the restarted ringd kept it live (a
        /// restart may resume it or end it with server_restart: not this
        /// test's concern), so that it can be placed again.
        private func endLeftover(_ caller: Device) throws {
            guard let live = try caller.activeCall() else { return }
            let reply = live.status == .initiated ? try caller.cancel(live.sessionId) : try caller.end(live.sessionId)
            guard reply.ok else { throw ClientError("\(caller): cannot end the interrupted call \(live): \(reply)") }
        }

        /// initiate → ring → accept → accepted → end → ended, each party
        /// hearing every step; events of an earlier call are skipped.
        private func placeCall(_ devices: (caller: Device, callee: Device), _ index: Int) throws {
            let (caller, callee) = devices
            let sessionId = try caller.initiate(to: "restart-callee-\(index)", "video").call().sessionId
            _ = try callee.waitForEvent(sessionId, .initiated)
            let accepted = try callee.accept(sessionId).call()
            guard accepted.status == .ongoing else { throw ClientError("pair \(index): accept answered \(accepted)") }
            _ = try caller.waitForEvent(sessionId, .ongoing)
            let ended = try caller.end(sessionId).call()
            guard ended.status == .ended else { throw ClientError("pair \(index): end answered \(ended)") }
            _ = try callee.waitForEvent(sessionId, .ended)
        }
    }
}
