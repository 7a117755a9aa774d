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

    /// Passes deliveries to their sessions, in order; sessions that closed meanwhile are skipped.
    func deliver(_ batch: [(UInt64, Delivery)]) {
        for (connection, delivery) in batch {
            sessions[connection]?.deliver(delivery)
        }
    }
}
