import SignalCore
import SignalCrypto
import SignalProtocol
import SignalReactor
import Synchronization

/// Drives the ``CallStateMachine`` for every loop of a server: feeds it
/// requests, presence changes and timers; commits each change to the store
/// (with what the consumers record) before anyone hears of it; then hands
/// the changes to the consumers and delivers results, events and closes to
/// the devices' loops.
///
/// Ordering: every input is applied under one lock and its changes queued to
/// the store's single writer inside that lock, so they are committed and
/// delivered in the order they happened; each loop's mailbox keeps that
/// order per device.
///
/// Memory never differs from the store: when a commit fails, the service
/// stops taking requests, rebuilds the machine's calls from the store once
/// every change queued before has failed or committed (the store's change
/// chain sees to it that none after the failure commits), and takes
/// requests again (see `SignalingService+Recovery.swift`).
public final class SignalingService: Sendable {
    /// The configuration in force.
    public let config: ServerConfig
    /// Where calls are decided and kept (``CallBackend``).
    public let backend: CallBackend
    /// Token minting and verification.
    public let tokens: TokenAuthority
    public let keys: AccessKeys
    /// `limits.restRequestsPerSecond`, per API key.
    let restLimits: RestRateLimits
    let clock: SignalingClock
    let consumers: [any CallChangeConsumer]
    /// The consumers that write in the transaction of the changes.
    private let recorders: [any CallChangeConsumer]
    /// The devices' push tokens (kept whether or not push is configured).
    let pushTokens: PushTokenRegistry
    /// The push worker, when a push service is configured.
    let pushes: PushDispatcher?
    /// What `GET /metrics` reports about signaling.
    let metrics: SignalingMetrics
    /// Every transition, for the test API's tap (only with `testing.enabled`).
    let tap: TransitionTap?
    /// The machine's settings.
    let machineSettings: SignalingSettings

    /// The machine, and what the service accepts.
    struct Core: Sendable {
        var machine: CallStateMachine
        /// Shutting down: requests and new devices are refused.
        var stopping = false
        /// A commit failed and the machine is not rebuilt yet: requests are
        /// refused, presence changes and timers wait in `deferred`.
        var recovering = false
        /// The test API stopped the machine to reset or restart it (why):
        /// handled like `recovering`.
        var paused: String?
        /// Inputs that arrived while recovering or paused, in order.
        var deferred: [(Input, TransitionInput)] = []
    }

    /// One input to the machine.
    typealias Input = @Sendable (inout CallStateMachine, SignalingTime) -> SignalingOutput

    let core: Mutex<Core>
    let mailboxes = Mutex<[Int: LoopMailbox]>([:])
    let pendingWork = Mutex(PendingWork())
    /// What the start asked of the loops (ring and grace timers of the
    /// calls it restored), performed once loop 0 serves.
    let startActions = Mutex<[SignalingAction]>([])

    /// A service over `store`, on the system's clocks unless told otherwise.
    public convenience init(
        config: ServerConfig, store: CallStore, tokens: TokenAuthority, keys: AccessKeys,
        clock: SignalingClock = .system
    ) {
        self.init(config: config, backend: .embedded(store), tokens: tokens, keys: keys, clock: clock, consumers: [])
    }

    /// A service whose changes also go to `consumers`, and whose ringing
    /// calls go to `pushes`.
    init(
        config: ServerConfig, backend: CallBackend, tokens: TokenAuthority, keys: AccessKeys, clock: SignalingClock,
        consumers: [any CallChangeConsumer], pushTokens: PushTokenRegistry = PushTokenRegistry(),
        pushes: PushDispatcher? = nil, metrics: SignalingMetrics? = nil, tap: TransitionTap? = nil
    ) {
        self.config = config
        self.backend = backend
        self.tokens = tokens
        self.keys = keys
        restLimits = RestRateLimits(requestsPerSecond: config.restRequestsPerSecond)
        self.clock = clock
        self.consumers = consumers
        recorders = consumers.filter(\.records)
        self.pushTokens = pushTokens
        self.pushes = pushes
        self.metrics = metrics ?? SignalingMetrics(wall: clock.wall)
        self.tap = tap
        machineSettings = SignalingSettings(config: config, pushes: pushes != nil)
        core = Mutex(Core(machine: CallStateMachine(settings: machineSettings)))
    }

    /// Milliseconds since the Unix epoch, from the service's clock.
    public var now: Int64 { clock.wall() }

    /// Sets up signaling on `loop` (called on that loop, before it serves).
    func register(_ loop: EventLoop) -> SignalingLoop {
        if let existing = loop.attachment(SignalingLoop.self) { return existing }
        let state = SignalingLoop(loop: loop, service: self)
        loop.attach(state)
        let mailbox = loop.mailbox
        mailboxes.withLock { $0[loop.index] = mailbox }
        if loop.index == 0 {
            let actions = startActions.withLock { actions in
                defer { actions = [] }
                return actions
            }
            perform(DeliveryPlan(actions))
        }
        return state
    }

    // MARK: Inputs

    /// A device authenticated (on `loop`, its connection's), resuming after
    /// a position of the change sequence (of a store epoch) or not.
    func connect(_ device: Device, requestId: String?, resuming: ResumePoint? = nil, on loop: SignalingLoop) {
        apply(
            .presence(refusing: (device.address, requestId)),
            .connect(device, requestId: requestId, resumingAfter: resuming?.afterSeq),
            on: loop
        ) { machine, now in
            machine.connect(
                device, requestId: requestId, resumingAfter: resuming?.afterSeq, resumingEpoch: resuming?.epoch,
                now: now)
        }
    }

    /// A device's connection closed (on `loop`, its connection's).
    func disconnect(_ device: Device, on loop: SignalingLoop) {
        apply(.presence(refusing: nil), .disconnect(device), on: loop) { machine, now in
            machine.disconnect(device, now: now)
        }
    }

    /// A call request from an authenticated device (on `loop`, its connection's).
    func handle(_ request: ClientRequest, id: String, from device: Device, on loop: SignalingLoop) {
        apply(.request(device.address, id: id), .request(request, id: id, device: device), on: loop) { machine, now in
            machine.handle(request, id: id, from: device, now: now)
        }
    }

    /// A page of the device's user's call history, answered from the store.
    func callLogs(_ filter: CallLogFilter, id: String, from device: Device) {
        if case .cluster(let node) = backend {
            return node.answer(device, id: id, for: self) { db throws(StoreError) in
                .callLogs(try db.callLogs(for: device.uid, query: filter))
            }
        }
        callLogs(for: device.uid, query: filter) { [self] result in
            reply(to: device, id: id, result.map(ResultData.callLogs).mapError(\.signalError))
        }
    }

    /// The ICE servers for `uid`'s peer connections, with TURN credentials
    /// minted now.
    func iceServers(for uid: String) -> SignalingReply {
        do throws(CryptoError) {
            return .success(.iceServers(try TURNCredentials.iceServers(for: uid, now: now, settings: config.webrtc)))
        } catch {
            return .failure(SignalError(.internalError, "minting TURN credentials failed: \(error.message)"))
        }
    }

    /// Answers a request of `device` that the machine does not see (the
    /// store answers it).
    func reply(to device: Device, id: String, _ reply: SignalingReply) {
        deliver([(device.address, .frame(resultFrame(id: id, reply.map(\.json))))])
    }

    /// A result frame for a device, its failures counted for `GET /metrics`.
    func resultFrame(id: String?, _ result: Result<JSONValue, SignalError>) -> [UInt8] {
        if case .failure(let error) = result { metrics.countError(error.code) }
        return ServerFrame.result(id: id, result).encoded
    }

    /// The live call with `sessionId`, if any (for the REST API).
    func liveCall(sessionId: String) -> Call? {
        core.withLock { $0.machine.liveCall(sessionId: sessionId) }
    }

    func timerFired(_ timer: SignalingTimer) {
        apply(.timer, .timer(timer)) { machine, now in machine.timerFired(timer, now: now) }
    }

    /// The push worker found nothing to ring the callee of `sessionId` with
    /// (`calls.unreachable: fail`). Treated like a timer: the server's own
    /// input, dropped while stopping.
    func unreachable(sessionId: String) {
        apply(.timer, .unreachable(sessionId: sessionId)) { machine, now in
            machine.unreachable(sessionId: sessionId, now: now)
        }
    }

    // MARK: Effects

    /// Applies one input, as the backend decides it (``CallBackend/apply``).
    func apply(
        _ kind: InputKind, _ description: TransitionInput, on loop: SignalingLoop? = nil,
        _ input: @escaping Input
    ) {
        backend.apply(kind, description, on: loop, input, for: self)
    }

    /// Applies one input to the service's own machine under the lock and
    /// queues its output to `store` inside the lock, so outputs commit in
    /// the order of the changes. An input from an event loop commits at the
    /// end of the loop's pass, with the other inputs of that pass.
    func applyEmbedded(
        _ kind: InputKind, _ description: TransitionInput, on loop: SignalingLoop?, to store: CallStore,
        _ input: @escaping Input
    ) {
        let admission = core.withLock { core in
            let held = core.paused.map { SignalError(.unavailable, $0) } ?? (core.recovering ? Refusal.recovering : nil)
            let admission = kind.admission(stopping: core.stopping, held: held)
            switch admission {
            case .run: run(input, description, on: &core.machine, wakeWriter: loop == nil)
            case .hold: core.deferred.append((input, description))
            case .drop, .refuse: break
            }
            return admission
        }
        loop?.commitStoreAtTickEnd()
        refuse(admission)
    }

    /// Answers a refused input's requester.
    func refuse(_ admission: Admission) {
        guard case .refuse(let address, let id, let error) = admission else { return }
        deliver([(address, .frame(resultFrame(id: id, .failure(error))))])
    }

    /// Runs `input` on `machine` (the core's, locked) and queues its output.
    func run(_ input: Input, _ description: TransitionInput, on machine: inout CallStateMachine, wakeWriter: Bool) {
        let output = input(&machine, clock.now())
        enqueue(output, wakeWriter: wakeWriter, record: transitionRecord(description, output, machine))
    }

    /// What the tap shows of a transition (nil without a tap), named while
    /// `machine` still knows who is at each address.
    func transitionRecord(
        _ input: TransitionInput, _ output: SignalingOutput,
        _ machine: CallStateMachine
    ) -> TransitionRecord? {
        guard tap != nil, !output.isEmpty else { return nil }
        return TransitionRecord(input: input, output: output, at: clock.wall()) { address in
            if let device = input.device, device.address == address { return (device.uid, device.deviceId) }
            if let name = machine.deviceName(at: address) { return name }
            // The one address a connect names that the machine no longer
            // knows: the connection of the same device it replaced.
            if case .connect(let device, _, _) = input { return (device.uid, device.deviceId) }
            return nil
        }
    }

    /// Queues `output`'s changes to the store (call with the core locked, so
    /// that changes are queued in the order they were made); once they are
    /// committed the consumers get them, the tap its `record`, and the
    /// actions are performed. A failed commit starts a recovery.
    func enqueue(_ output: SignalingOutput, wakeWriter: Bool, record: TransitionRecord? = nil) {
        // The machine in `core` runs only beside an embedded store
        // (``CallBackend/apply``); a cluster's machines run in its transactions.
        guard !output.isEmpty, let store = backend.embeddedStore else { return }
        let tap = record == nil ? nil : self.tap
        let changes = output.changes
        // A relay rests on the call being ongoing: if a change before it
        // was lost (the accept), the signal must not reach the peer.
        let relays = output.actions.contains { if case .signal = $0 { true } else { false } }
        let plan = DeliveryPlan(output.actions)
        store.commit(
            changes, reservingSeq: output.seqReservation, restartGrace: output.restartGrace, wakeWriter: wakeWriter,
            followsEarlierChanges: relays, recording: recording(for: changes)
        ) { [self] result in
            switch result {
            case .failure(let error) where error.code == .closed:
                // The store closed under a live service (the job was refused
                // at once, on this thread, with the core still locked): there
                // is nothing left to recover, and locking the core again would deadlock.
                break
            case .failure(let error) where !changes.isEmpty || !output.restartGrace.isEmpty:
                // A chained write failed (restart grace rows are links too).
                commitFailed(error, store: store)
            case .failure, .success:
                if !changes.isEmpty { for consumer in consumers { consumer.committed(changes) } }
            }
            if let record { tap?.publish(record, committed: result.isSuccess) }
            perform(result.isSuccess ? plan : plan.afterFailedCommit)
        }
        for resume in plan.resumes { replyResuming(resume, from: store, wakeWriter: wakeWriter) }
    }

    /// What the consumers write in the transaction that commits `changes`.
    func recording(for changes: [CallChange]) -> (@Sendable (StoreConnection) throws(StoreError) -> Void)? {
        guard !changes.isEmpty, !recorders.isEmpty else { return nil }
        let recorders = self.recorders
        return { connection throws(StoreError) in
            for consumer in recorders { try consumer.record(changes, in: connection) }
        }
    }
}
