import SignalCore
import SignalProtocol

extension SignalingService {
    /// Carries out `plan` once its output's changes were committed (on the
    /// thread that ran the store's batch), or what is left of it after a
    /// failed commit (``DeliveryPlan/afterFailedCommit``).
    func perform(_ plan: DeliveryPlan) {
        for lookup in plan.lookups { resolve(lookup) }
        for ring in plan.rings { pushes?.ring(ring.call, connected: ring.connected) }
        for call in plan.ringsStopped { pushes?.stopped(call) }
        deliver(plan.deliveries(encodingResults: resultFrame), timers: plan.timers)
    }

    /// Answers a request about a session that is not live, from the store.
    private func resolve(_ lookup: DeliveryPlan.Lookup) {
        backend.call(sessionId: lookup.sessionId) { [self] result in
            let error =
                switch result {
                case .success(let stored): SignalError.notLive(lookup.sessionId, stored: stored, askedBy: lookup.uid)
                case .failure(let failure): failure.signalError
                }
            deliver([(lookup.address, .frame(resultFrame(id: lookup.id, .failure(error))))])
        }
    }

    /// Hands deliveries to the loops of their devices and timers to loop 0
    /// (any loop would do; one keeps them in one heap), one mailbox task per
    /// loop. From a store batch's completions they are held until every
    /// completion of the batch has run, and go out together: one wake-up per loop
    /// for the whole batch, not one per change.
    func deliver(_ deliveries: [(DeviceAddress, Delivery)], timers: [TimerChange] = []) {
        guard !deliveries.isEmpty || !timers.isEmpty else { return }
        guard let store = backend.embeddedStore, store.isRunningBatch else {
            // Only a batch's completions hold work back; anyone else (a
            // refusal on a loop) sends at once, never taking the batch's held work.
            var work = PendingWork()
            work.add(deliveries, timers: timers)
            return send(work)
        }
        let first = pendingWork.withLock { pending in
            let wasEmpty = pending.isEmpty
            pending.add(deliveries, timers: timers)
            return wasEmpty
        }
        if first { store.afterBatch { [self] in sendPendingWork() } }
    }

    private func sendPendingWork() {
        send(
            pendingWork.withLock { pending in
                let taken = pending
                pending = PendingWork()
                return taken
            })
    }

    /// One mailbox task per loop: its deliveries, and on loop 0 the timer changes.
    private func send(_ work: PendingWork) {
        let boxes = mailboxes.withLock { $0 }
        var loops = Set(work.deliveries.keys)
        if !work.timers.isEmpty { loops.insert(0) }
        for index in loops {
            let batch = work.deliveries[index] ?? []
            let timers = index == 0 ? work.timers : []
            boxes[index]?.submit { loop in
                guard let state = loop.attachment(SignalingLoop.self) else { return }
                state.deliver(batch)
                for change in timers {
                    switch change {
                    case .schedule(let timer, let at):
                        state.schedule(timer, due: at)
                    case .cancel(let timer):
                        state.cancel(timer)
                    }
                }
            }
        }
    }
}

/// Work for the loops that the thread running a store batch holds until its batch's
/// completions have all run.
struct PendingWork: Sendable {
    /// Deliveries by loop index, in order.
    var deliveries: [Int: [(UInt64, Delivery)]] = [:]
    /// Timers for loop 0 to start or drop, in order.
    var timers: [TimerChange] = []

    var isEmpty: Bool { deliveries.isEmpty && timers.isEmpty }

    /// Appends deliveries (grouped by loop, in order) and timer changes.
    mutating func add(_ deliveries: [(DeviceAddress, Delivery)], timers: [TimerChange]) {
        for (address, delivery) in deliveries {
            self.deliveries[address.loop, default: []].append((address.connection, delivery))
        }
        self.timers += timers
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
