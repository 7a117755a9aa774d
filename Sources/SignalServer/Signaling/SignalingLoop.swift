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
    private var storeWakeScheduled = false
    private var timers: [SignalingTimer: TimerID] = [:]

    init(loop: EventLoop, service: SignalingService) {
        index = loop.index
        eventLoop = loop
        self.service = service
    }

    /// Wakes the store's writer at the end of this pass of the loop, once
    /// for every save queued during the pass, so that they commit together.
    func wakeStoreWriterAtTickEnd() {
        guard !storeWakeScheduled else { return }
        storeWakeScheduled = true
        eventLoop.atTickEnd { [self] in
            storeWakeScheduled = false
            service.store.wakeWriter()
        }
    }

    /// Registers a session; returns its address.
    func add(_ session: SignalingSession) -> DeviceAddress {
        let connection = nextConnection
        nextConnection += 1
        sessions[connection] = session
        return DeviceAddress(loop: index, connection: connection)
    }

    /// Forgets a closed session.
    func remove(_ address: DeviceAddress) {
        sessions[address.connection] = nil
    }

    /// Runs `fire` after `delay` seconds unless ``cancel(_:)`` drops `timer`
    /// first; replaces `timer` if it is pending.
    func schedule(_ timer: SignalingTimer, after delay: Double, _ fire: @escaping () -> Void) {
        cancel(timer)
        timers[timer] = eventLoop.schedule(after: delay) { [weak self] in
            self?.timers[timer] = nil
            fire()
        }
    }

    /// Drops `timer` if it is pending; otherwise does nothing.
    func cancel(_ timer: SignalingTimer) {
        if let id = timers.removeValue(forKey: timer) { eventLoop.cancel(id) }
    }

    /// Passes deliveries to their sessions, in order; sessions that closed meanwhile are skipped.
    func deliver(_ batch: [(UInt64, Delivery)]) {
        for (connection, delivery) in batch {
            sessions[connection]?.deliver(delivery)
        }
    }
}
