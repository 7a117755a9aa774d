import SignalProtocol
import Synchronization

/// Drives the ``CallStateMachine`` for every loop of a server: feeds it
/// requests, presence changes and timers; commits each change to the store
/// before anyone hears of it; then delivers results, events and closes to the
/// devices' loops.
///
/// Ordering: every input is applied under one lock and its output queued to
/// the store's single writer inside that lock, so outputs are committed and
/// delivered in the order the changes happened; each loop's mailbox keeps
/// that order per device.
public final class SignalingService: Sendable {
    /// The configuration in force.
    public let config: ServerConfig
    /// The durable store.
    public let store: CallStore
    /// Token minting and verification.
    public let tokens: TokenAuthority
    /// Auth and API keys.
    public let keys: AccessKeys

    /// The machine, and whether the service stopped taking requests.
    private struct Core: Sendable {
        var machine: CallStateMachine
        var stopping = false
    }

    private let core: Mutex<Core>
    private let mailboxes = Mutex<[Int: LoopMailbox]>([:])
    private let pendingWork = Mutex(PendingWork())
    private let clock: @Sendable () -> Int64

    /// A service over `store`. `clock` gives milliseconds since the Unix epoch.
    public init(config: ServerConfig, store: CallStore, tokens: TokenAuthority, keys: AccessKeys,
                clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds) {
        self.config = config
        self.store = store
        self.tokens = tokens
        self.keys = keys
        self.clock = clock
        let settings = SignalingSettings(defaultRingTimeout: config.ringTimeout,
                                         reconnectGraceMillis: Int64(config.reconnectGrace * 1000),
                                         maxDevicesPerUser: config.devicesPerUser)
        core = Mutex(Core(machine: CallStateMachine(settings: settings)))
    }

    /// Milliseconds since the Unix epoch, from the service's clock.
    public var now: Int64 { clock() }

    /// Sets up signaling on `loop` (called on that loop, before it serves).
    func register(_ loop: EventLoop) -> SignalingLoop {
        if let existing = loop.attachment(SignalingLoop.self) { return existing }
        let state = SignalingLoop(loop: loop, service: self)
        loop.attach(state)
        let mailbox = loop.mailbox
        mailboxes.withLock { $0[loop.index] = mailbox }
        return state
    }

    // MARK: Inputs

    /// A device authenticated (on `loop`, its connection's).
    func connect(_ device: Device, requestId: String?, on loop: SignalingLoop) {
        apply(on: loop, refusing: (device.address, requestId)) { machine, now in
            machine.connect(device, requestId: requestId, now: now)
        }
    }

    /// A device's connection closed (on `loop`, its connection's).
    func disconnect(_ device: Device, on loop: SignalingLoop) {
        apply(on: loop, evenWhenStopping: true) { machine, now in machine.disconnect(device, now: now) }
    }

    /// A call request from an authenticated device (on `loop`, its connection's).
    func handle(_ request: ClientRequest, id: String, from device: Device, on loop: SignalingLoop) {
        apply(on: loop, refusing: (device.address, id)) { machine, now in
            machine.handle(request, id: id, from: device, now: now)
        }
    }

    /// A page of the device's user's call history, answered from the store.
    func callLogs(_ filter: CallLogFilter, id: String, from device: Device) {
        store.callLogs(for: device.uid, query: filter) { [self] result in
            let reply: Result<JSONValue, SignalError> = result.map(\.json).mapError(\.signalError)
            deliver([(device.address, .frame(ServerFrame.result(id: id, reply).encoded))])
        }
    }

    /// The live call with `sessionId`, if any (for the REST API).
    func liveCall(sessionId: String) -> Call? {
        core.withLock { $0.machine.liveCall(sessionId: sessionId) }
    }

    private func timerFired(_ timer: SignalingTimer) {
        apply { machine, now in machine.timerFired(timer, now: now) }
    }

    /// Stops taking requests, ends every live call with `server_shutdown`,
    /// tells the devices, and waits until that is committed. Deliveries are
    /// queued on the loops ahead of anything asked of them afterwards.
    public func shutdown() {
        apply(evenWhenStopping: true) { machine, now in machine.shutdown(now: now) }
        core.withLock { $0.stopping = true }
        store.flush()
    }

    // MARK: Effects

    /// Applies one input under the lock and queues its output to the store
    /// inside the lock, so outputs commit in the order of the changes. Once
    /// stopping, requests are refused with `ERR_UNAVAILABLE` at `refusing`.
    /// An input from an event loop wakes the store's writer at the end of
    /// the loop's pass, with the other inputs of that pass.
    private func apply(on loop: SignalingLoop? = nil, evenWhenStopping: Bool = false,
                       refusing requester: (DeviceAddress, String?)? = nil,
                       _ input: (inout CallStateMachine, Int64) -> SignalingOutput) {
        let refused: Bool = core.withLock { core in
            guard evenWhenStopping || !core.stopping else { return true }
            let output = input(&core.machine, clock())
            guard !output.isEmpty else { return false }
            store.save(output.saves, wakeWriter: loop == nil) { [self] result in
                perform(output.actions, committed: result)
            }
            return false
        }
        loop?.wakeStoreWriterAtTickEnd()
        if refused, let (address, id) = requester {
            let error = SignalError(.unavailable, "the server is shutting down")
            deliver([(address, .frame(ServerFrame.result(id: id, .failure(error)).encoded))])
        }
    }

    /// Runs after the output's saves were committed (on the store's thread).
    private func perform(_ actions: [SignalingAction], committed: Result<Void, StoreError>) {
        if case .failure(let error) = committed {
            Log.error("store commit failed, the change is not durable: \(error)")
        }
        var deliveries: [(DeviceAddress, Delivery)] = []
        var timers: [TimerChange] = []
        // A change's events carry the same call to every device: encode it once.
        var lastEvent: (call: Call, frame: [UInt8])?
        for action in actions {
            switch action {
            case .reply(let address, let id, let result):
                let reply = committed.isSuccess ? result
                    : .failure(SignalError(.internalError, "the store failed; try again"))
                deliveries.append((address, .frame(ServerFrame.result(id: id, reply).encoded)))
            case .event(let address, let call) where committed.isSuccess:
                let frame = lastEvent.flatMap { $0.call == call ? $0.frame : nil } ?? ServerFrame.call(call).encoded
                lastEvent = (call, frame)
                deliveries.append((address, .frame(frame)))
            case .close(let address, let code, let reason):
                deliveries.append((address, .close(code: code, reason: reason)))
            case .schedule(let timer, let at):
                timers.append(.schedule(timer, at: at))
            case .cancel(let timer):
                timers.append(.cancel(timer))
            case .resolveSession(let address, let id, let sessionId, let uid):
                resolve(sessionId, for: uid, replyTo: address, id: id)
            case .event:
                break
            }
        }
        deliver(deliveries, timers: timers)
    }

    /// Answers a request about a session that is not live, from the store.
    private func resolve(_ sessionId: String, for uid: String, replyTo address: DeviceAddress, id: String) {
        store.call(sessionId: sessionId) { [self] result in
            let error: SignalError
            switch result {
            case .success(let call?) where call.isParty(uid):
                error = SignalError(.terminated, "call \(sessionId) already ended (\(call.status.rawValue))")
            case .success(.some):
                error = SignalError(.notAParty, "\(uid) is not a party of call \(sessionId)")
            case .success(nil):
                error = SignalError(.sessionNotFound, "no call \(sessionId)")
            case .failure(let failure):
                error = failure.signalError
            }
            deliver([(address, .frame(ServerFrame.result(id: id, .failure(error)).encoded))])
        }
    }

    /// Hands deliveries to the loops of their devices and timers to loop 0
    /// (any loop would do; one keeps them in one heap), one mailbox task per
    /// loop. On the store's thread they are held until every completion of
    /// the store's batch has run, and go out together: one wake-up per loop
    /// for the whole batch, not one per change.
    private func deliver(_ deliveries: [(DeviceAddress, Delivery)], timers: [TimerChange] = []) {
        guard !deliveries.isEmpty || !timers.isEmpty else { return }
        guard store.isWriterThread else {
            // Only the store's thread holds work back; anyone else (a refusal
            // on a loop) sends at once, never taking the writer's held work.
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
        send(pendingWork.withLock { pending in
            let taken = pending
            pending = PendingWork()
            return taken
        })
    }

    /// One mailbox task per loop: its deliveries, and on loop 0 the timer changes.
    private func send(_ work: PendingWork) {
        let boxes = mailboxes.withLock { $0 }
        let now = clock()
        var loops = Set(work.deliveries.keys)
        if !work.timers.isEmpty { loops.insert(0) }
        for index in loops {
            let batch = work.deliveries[index] ?? []
            let timers = index == 0 ? work.timers : []
            boxes[index]?.submit { [self] loop in
                guard let state = loop.attachment(SignalingLoop.self) else { return }
                state.deliver(batch)
                for change in timers {
                    switch change {
                    case .schedule(let timer, let at):
                        state.schedule(timer, after: Double(max(0, at - now)) / 1000) { [self] in timerFired(timer) }
                    case .cancel(let timer):
                        state.cancel(timer)
                    }
                }
            }
        }
    }
}

/// A machine timer to start or drop, on loop 0.
private enum TimerChange: Sendable {
    /// Start `timer`, due at `at` (ms since the epoch).
    case schedule(SignalingTimer, at: Int64)
    /// Drop `timer` if it has not run.
    case cancel(SignalingTimer)
}

/// Work for the loops that the store's thread holds until its batch's
/// completions have all run.
private struct PendingWork {
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
    case close(code: UInt16, reason: String)
}

/// The wall clock in milliseconds since the Unix epoch.
public enum WallClock {
    /// Now.
    @Sendable public static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

extension Result {
    /// Whether this is a success.
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

#if canImport(Glibc)
import Glibc
#endif
