import SignalCore
import SignalProtocol

extension SignalingService {
    /// Runs after an output's changes were committed, or failed to be (on
    /// the thread that ran the store's batch). A failed commit answers its requester with
    /// `ERR_INTERNAL` and does nothing else: no event, no timer (the
    /// recovery schedules what the rebuilt calls need).
    func perform(_ actions: [SignalingAction], committed: Result<Void, StoreError>) {
        var deliveries: [(DeviceAddress, Delivery)] = []
        var timers: [TimerChange] = []
        let failed = !committed.isSuccess
        for action in actions {
            switch action {
            case .reply(let address, let id, let reply):
                let result =
                    failed ? .failure(SignalError(.internalError, "the store failed; try again")) : reply.map(\.json)
                deliveries.append((address, .frame(resultFrame(id: id, result))))
            case .event(let call, let recipients) where !failed:
                let frame = ServerFrame.call(call).encoded
                for address in recipients { deliveries.append((address, .frame(frame))) }
            case .signal(let signal, let address) where !failed:
                deliveries.append((address, .frame(ServerFrame.signal(signal).encoded)))
            case .close(let address, let code, let reason):
                deliveries.append((address, .close(code: code, reason: reason)))
            case .schedule(let timer, let at) where !failed:
                timers.append(.schedule(timer, at: at))
            case .cancel(let timer) where !failed:
                timers.append(.cancel(timer))
            case .resolveSession(let address, let id, let sessionId, let uid):
                resolve(sessionId, for: uid, replyTo: address, id: id)
            case .push(let call, let connected) where !failed:
                pushes?.ring(call, connected: connected)
            case .pushStopped(let call) where !failed:
                pushes?.stopped(call)
            case .event, .signal, .schedule, .cancel, .replyResuming, .push, .pushStopped:
                break
            }
        }
        deliver(deliveries, timers: timers)
    }

    /// Answers a request about a session that is not live, from the store.
    private func resolve(_ sessionId: String, for uid: String, replyTo address: DeviceAddress, id: String) {
        store.call(sessionId: sessionId) { [self] result in
            let error =
                switch result {
                case .success(let stored): SignalError.notLive(sessionId, stored: stored, askedBy: uid)
                case .failure(let failure): failure.signalError
                }
            deliver([(address, .frame(resultFrame(id: id, .failure(error))))])
        }
    }

    /// Hands deliveries to the loops of their devices and timers to loop 0
    /// (any loop would do; one keeps them in one heap), one mailbox task per
    /// loop. From a store batch's completions they are held until every
    /// completion of the batch has run, and go out together: one wake-up per loop
    /// for the whole batch, not one per change.
    func deliver(_ deliveries: [(DeviceAddress, Delivery)], timers: [TimerChange] = []) {
        guard !deliveries.isEmpty || !timers.isEmpty else { return }
        guard store.isRunningBatch else {
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

/// A machine timer to start or drop, on loop 0.
enum TimerChange: Sendable {
    /// Start `timer`, due when the monotonic clock reads `at` (ms).
    case schedule(SignalingTimer, at: Int64)
    /// Drop `timer` if it has not run.
    case cancel(SignalingTimer)
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

/// Something for one device's connection.
enum Delivery: Sendable {
    /// A text frame, already encoded.
    case frame([UInt8])
    /// Close the WebSocket with this code.
    case close(code: WebSocketCloseCode, reason: String)
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
