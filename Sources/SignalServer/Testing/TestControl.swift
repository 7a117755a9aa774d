import Dispatch
import SignalCore
import SignalCrypto
import SignalProtocol
import SignalReactor
import Synchronization

/// What the test API does to a running ringd: its clock, faults, a
/// simulated crash, a reset. Every operation runs on one serial queue
/// (`ringd-test-control`), never on an event loop, because each waits for
/// the store and the loops; the HTTP routes answer from there.
public final class TestControl: Sendable {
    /// The secret of `X-Test-Key`, hashed for a comparison in constant time.
    private let key: SecretDigest
    let clock: TestClock
    let tap = TransitionTap()
    /// Commits still to fail (`POST /v1/test/store/fail`).
    private let failingCommits = Mutex(0)
    private let serviceRef = Mutex<SignalingService?>(nil)
    /// The service's store: the test API runs only on a node of its own.
    private let storeRef = Mutex<CallStore?>(nil)
    let queue = DispatchQueue(label: "ringd-test-control")

    /// How long an operation waits for a loop to run its part.
    static let loopTimeout = DispatchTimeInterval.seconds(10)

    init(key: String, clock: TestClock = TestClock()) throws(CryptoError) {
        self.key = try SecretDigest(Array(key.utf8))
        self.clock = clock
    }

    /// Whether `candidate` is the test key.
    func isKey(_ candidate: String) -> Bool {
        guard let digest = try? SecretDigest(Array(candidate.utf8)) else { return false }
        return key.matches(digest)
    }

    /// Takes control of `service` (its clock must be ``clock``'s) and of its store's faults.
    func attach(to service: SignalingService, store: CallStore) {
        serviceRef.withLock { $0 = service }
        storeRef.withLock { $0 = store }
        store.setFaultHook { [weak self] point in
            guard point == .commit, let self else { return nil }
            return failingCommits.withLock { remaining -> StoreError? in
                guard remaining > 0 else { return nil }
                remaining -= 1
                return StoreError(.database, "SQLITE_IOERR: injected by the test API")
            }
        }
    }

    private var service: SignalingService? { serviceRef.withLock { $0 } }

    private func store() throws(TestControlError) -> CallStore {
        guard let store = storeRef.withLock({ $0 }) else {
            throw TestControlError(.unavailable, "the test API has no store")
        }
        return store
    }

    // MARK: Clock

    /// Switches the clock; in manual mode ring and grace timers wait for ``advance(by:)``.
    func setClock(_ mode: TestClock.Mode) throws(TestControlError) {
        let service = try running()
        // On loop 0, where the timers run: none fires between the two.
        try onLoop(0, of: service) { [clock] state in
            clock.set(mode)
            state.setManualTimers(mode == .manual)
        }
    }

    /// Moves the manual clock `milliseconds` forward. Each timer due by then
    /// fires at its deadline, in deadline order, and its changes are
    /// committed and handed to the devices' loops before the next; returns
    /// once all of that is written to the devices' connections, with the
    /// number of timers fired.
    func advance(by milliseconds: Int64) throws(TestControlError) -> Int {
        let service = try running()
        guard clock.mode == .manual else {
            throw TestControlError(.conflict, "the clock is real: POST /v1/test/clock {\"mode\":\"manual\"} first")
        }
        let target = clock.now().monotonic + milliseconds
        var fired = 0
        while true {
            // Every timer change of the last firing has reached loop 0 once the store is flushed.
            try store().flush()
            let next = Mutex<(timer: SignalingTimer, due: Int64)?>(nil)
            try onLoop(0, of: service) { state in
                let taken = state.takeTimer(dueBy: target)
                next.withLock { $0 = taken }
            }
            guard let (timer, due) = next.withLock({ $0 }) else { break }
            clock.advance(toMonotonic: due)
            service.timerFired(timer)
            fired += 1
        }
        clock.advance(toMonotonic: target)
        try settle(service)
        return fired
    }

    // MARK: Faults

    /// Drops the device's connection with a TCP reset.
    func drop(uid: String, deviceId: String) throws(TestControlError) {
        try onSession(uid: uid, deviceId: deviceId) { $0.drop() }
    }

    /// Holds the device's frames for `milliseconds`, or until released.
    func hold(uid: String, deviceId: String, milliseconds: Int64?) throws(TestControlError) {
        try onSession(uid: uid, deviceId: deviceId) { $0.hold(milliseconds: milliseconds) }
    }

    /// Sends what was held for the device.
    func release(uid: String, deviceId: String) throws(TestControlError) {
        try onSession(uid: uid, deviceId: deviceId) { $0.release() }
    }

    /// Makes the next `count` store commits fail (0 stops failing).
    func failCommits(_ count: Int) throws(TestControlError) {
        _ = try running()
        failingCommits.withLock { $0 = count }
    }

    /// A crash and a start, without the process: every device connection is
    /// reset, the machine is thrown away, and a new one starts from what the
    /// store holds (restoring or ending the live calls as `calls.onRestart`
    /// says, timers and pushes included).
    func crash() throws(TestControlError) -> StartReport {
        let service = try running()
        let report = Mutex(StartReport(restored: 0, ended: 0))
        try replaceMachine(of: service, "the server is restarting (test API); try again", closing: { $0.drop() }) {
            () throws(TestControlError) in
            let store = try store()
            store.flush()
            let continuity: StoreContinuity
            do throws(StoreError) {
                continuity = try store.loadContinuity()
            } catch {
                throw TestControlError(.storeFailed, "reading the store failed: \(error)")
            }
            return { core in
                core.machine = CallStateMachine(settings: core.machine.settings)
                core.machine.continueSequence(after: continuity.lastSeq, epoch: continuity.epoch)
                for record in continuity.users { core.machine.remember(record) }
                let onRestart = service.config.onRestart
                service.run(
                    { machine, now in
                        onRestart == .resume
                            ? machine.restore(
                                continuity.liveCalls, graceDeadlines: continuity.restartGraceDeadlines, now: now)
                            : machine.restart(
                                with: continuity.liveCalls, graceDeadlines: continuity.restartGraceDeadlines, now: now)
                    }, .restart, on: &core.machine, wakeWriter: true)
                let restored = core.machine.liveCalls.count
                report.withLock { $0 = StartReport(restored: restored, ended: continuity.liveCalls.count - restored) }
            }
        }
        try settle(service)
        return report.withLock { $0 }
    }

    /// Back to a new server: every device connection closed with 4010, the
    /// store emptied, the real clock, no held frames, no failing commits,
    /// no kept transitions. The change sequence goes on, so nothing still in
    /// flight from before (a webhook attempt's outcome) can land on a new
    /// call's rows; pushes still owed for a ringing call are dropped.
    func reset() throws(TestControlError) {
        let service = try running()
        failingCommits.withLock { $0 = 0 }
        let ringing = Mutex<[Call]>([])
        try replaceMachine(
            of: service, "the server is resetting (test API); try again", closing: { $0.closeForReset() }
        ) {
            () throws(TestControlError) in
            let store = try store()
            store.flush()
            let continuity: StoreContinuity
            do throws(StoreError) {
                try store.reset()
                continuity = try store.loadContinuity()
            } catch {
                throw TestControlError(.storeFailed, "emptying the store failed: \(error)")
            }
            service.tokens.forgetRevocations()
            service.pushTokens.removeAll()
            // Real time again, on loop 0 with its timers, as a switch of the clock is.
            try onLoop(0, of: service) { [clock] state in
                clock.reset()
                state.setManualTimers(false)
            }
            tap.clear()
            return { core in
                ringing.withLock { $0 = core.machine.liveCalls.values.filter { $0.status == .initiated } }
                core.machine = CallStateMachine(settings: core.machine.settings)
                core.machine.continueSequence(after: continuity.lastSeq, epoch: continuity.epoch)
            }
        }
        for call in ringing.withLock({ $0 }) { service.pushes?.stopped(call) }
        try settle(service)
    }

    // MARK: Driving the service

    private func running() throws(TestControlError) -> SignalingService {
        guard let service, !service.core.withLock({ $0.stopping }) else {
            throw TestControlError(.unavailable, "the server is shutting down")
        }
        return service
    }

    /// Puts a new machine in the core: pauses the machine (requests are
    /// refused with `reason`, presence changes and timers wait), runs
    /// `closing` on every device's session, then `prepare` (off the loops),
    /// drops loop 0's timers, and makes the change `prepare` returns. The
    /// inputs that waited are then applied to the new machine, except the
    /// old machine's timers (its grace generations would match the new
    /// one's) and what the closed sessions did. On a failure the old machine
    /// goes on, with everything that waited.
    private func replaceMachine(
        of service: SignalingService, _ reason: String,
        closing: @escaping @Sendable (SignalingSession) -> Void,
        prepare: () throws(TestControlError) -> (inout SignalingService.Core) -> Void
    )
        throws(TestControlError)
    {
        let paused = service.core.withLock { core -> Bool in
            guard !core.stopping else { return false }
            core.paused = reason
            return true
        }
        guard paused else { throw TestControlError(.unavailable, "the server is shutting down") }
        let closed = Mutex<Set<DeviceAddress>>([])
        let change: (inout SignalingService.Core) -> Void
        do throws(TestControlError) {
            try onEveryLoop(of: service) { state in
                for session in state.openSessions {
                    if let address = session.address { closed.withLock { _ = $0.insert(address) } }
                    closing(session)
                }
            }
            change = try prepare()
            try onLoop(0, of: service) { $0.cancelAllTimers() }
        } catch {
            resume(service) { _ in }
            throw error
        }
        let addresses = closed.withLock { $0 }
        resume(service) { core in
            change(&core)
            core.deferred.removeAll { _, input in
                if case .timer = input { return true }
                return input.device.map { addresses.contains($0.address) } ?? false
            }
        }
    }

    /// Makes `change`, then applies what waited while paused.
    private func resume(_ service: SignalingService, _ change: (inout SignalingService.Core) -> Void) {
        service.core.withLock { core in
            change(&core)
            core.paused = nil
            if !core.recovering { service.replayDeferred(&core) }
        }
    }

    /// Waits until everything queued is committed and every loop has run
    /// what it was handed (the frames are written to the connections).
    private func settle(_ service: SignalingService) throws(TestControlError) {
        try store().flush()
        try onEveryLoop(of: service) { _ in }
    }

    private func onSession(
        uid: String, deviceId: String,
        _ body: @escaping @Sendable (SignalingSession) -> Void
    ) throws(TestControlError) {
        let service = try running()
        guard let address = service.core.withLock({ $0.machine.devices[uid]?[deviceId] }) else {
            throw TestControlError(.notFound, "\(uid)/\(deviceId) is not connected")
        }
        let found = Mutex(false)
        try onLoop(address.loop, of: service) { state in
            guard let session = state.session(address.connection) else { return }
            found.withLock { $0 = true }
            body(session)
        }
        guard found.withLock({ $0 }) else { throw TestControlError(.notFound, "\(uid)/\(deviceId) is not connected") }
    }
}

/// Why a test API operation failed: a stable code, an HTTP status, a message.
struct TestControlError: Error {
    enum Code: String {
        case notFound = "TEST_NOT_FOUND"
        case conflict = "TEST_CONFLICT"
        case unavailable = "TEST_UNAVAILABLE"
        case storeFailed = "TEST_STORE_FAILED"
    }

    let code: Code
    let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
