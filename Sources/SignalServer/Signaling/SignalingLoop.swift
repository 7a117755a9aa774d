import SignalCore
import SignalReactor

/// The signaling sessions of one event loop, by connection number, so work
/// handed to the loop can reach them.
final class SignalingLoop {
    /// The loop's index in the group.
    let index: Int
    /// The service the sessions belong to.
    let service: SignalingService
    /// The loop (which keeps this object as an attachment).
    unowned let eventLoop: EventLoop
    private var sessions: [UInt64: SignalingSession] = [:]
    private var nextConnection: UInt64 = 1
    private var storeCommitScheduled = false
    /// The machine's pending timers (loop 0 keeps them all).
    private var timers: [SignalingTimer: PendingTimer] = [:]
    private var timerOrder: UInt64 = 0
    /// Under the test API's manual clock, timers wait for an advance of the
    /// clock instead of running on the loop's.
    private var manualTimers = false

    /// A machine timer: when it is due (monotonic ms), the order it was
    /// scheduled in (ties fire in that order), the loop timer if it is armed.
    private struct PendingTimer {
        var due: Int64
        var order: UInt64
        var id: TimerID?
    }

    init(loop: EventLoop, service: SignalingService) {
        index = loop.index
        eventLoop = loop
        self.service = service
    }

    /// Commits the saves queued during this pass of the loop at its end,
    /// together, here or on the store's writer thread
    /// (``CallStore/runQueuedOnLoop()``).
    func commitStoreAtTickEnd() {
        guard !storeCommitScheduled else { return }
        storeCommitScheduled = true
        eventLoop.atTickEnd { [self] in
            storeCommitScheduled = false
            service.backend.embeddedStore?.runQueuedOnLoop()
        }
    }

    /// Registers a session; returns its address.
    func add(_ session: SignalingSession) -> DeviceAddress {
        let connection = nextConnection
        nextConnection += 1
        sessions[connection] = session
        return DeviceAddress(node: service.backend.node, loop: index, connection: connection)
    }

    /// Forgets a closed session.
    func remove(_ address: DeviceAddress) {
        sessions[address.connection] = nil
    }

    /// Calls ``SignalingService/timerFired(_:)`` with `timer` once the
    /// service's monotonic clock reads `due` (ms), unless ``cancel(_:)``
    /// drops it first; replaces `timer` if it is pending.
    func schedule(_ timer: SignalingTimer, due: Int64) {
        cancel(timer)
        timerOrder += 1
        timers[timer] = PendingTimer(due: due, order: timerOrder, id: manualTimers ? nil : arm(timer, due: due))
    }

    /// Drops `timer` if it is pending; otherwise does nothing.
    func cancel(_ timer: SignalingTimer) {
        if let id = timers.removeValue(forKey: timer)?.id { eventLoop.cancel(id) }
    }

    private func arm(_ timer: SignalingTimer, due: Int64) -> TimerID {
        let delay = Double(max(0, due - service.clock.monotonic())) / 1000
        return eventLoop.schedule(after: delay) { [weak self] in
            guard let self else { return }
            timers[timer] = nil
            service.timerFired(timer)
        }
    }

    /// Stops or starts running the timers on the loop's clock (the test
    /// API's manual clock, and back).
    func setManualTimers(_ manual: Bool) {
        guard manual != manualTimers else { return }
        manualTimers = manual
        for (timer, pending) in timers {
            if let id = pending.id { eventLoop.cancel(id) }
            timers[timer]?.id = manual ? nil : arm(timer, due: pending.due)
        }
    }

    /// Takes the earliest pending timer due at or before `limit` (for an
    /// advance of the manual clock), leaving the others.
    func takeTimer(dueBy limit: Int64) -> (timer: SignalingTimer, due: Int64)? {
        guard
            let (timer, pending) = timers.filter({ $0.value.due <= limit })
                .min(by: { ($0.value.due, $0.value.order) < ($1.value.due, $1.value.order) })
        else { return nil }
        cancel(timer)
        return (timer, pending.due)
    }

    /// Drops every pending timer (the machine they were for is gone).
    func cancelAllTimers() {
        for pending in timers.values { if let id = pending.id { eventLoop.cancel(id) } }
        timers = [:]
    }

    /// The session at `connection`, if it is open.
    func session(_ connection: UInt64) -> SignalingSession? { sessions[connection] }

    /// Every open session (for the test API's reset and crash).
    var openSessions: [SignalingSession] { Array(sessions.values) }

    /// Passes deliveries to their sessions, in order; sessions that closed meanwhile are skipped.
    func deliver(_ batch: [(UInt64, Delivery)]) {
        for (connection, delivery) in batch {
            sessions[connection]?.deliver(delivery)
        }
    }
}
