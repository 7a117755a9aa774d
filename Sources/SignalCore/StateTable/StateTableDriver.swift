import SignalProtocol

/// A ``CallStateMachine`` on a manual clock for ``StateTable``: the
/// fixture's devices, the timers the machine asked for, and what the store
/// would hold (every call as its latest change left it).
struct StateTableDriver {
    static let caller = "alice", callee = "bob", thirdParty = "carol"
    /// The settings the table runs with; `ringd states` passes the shipped
    /// defaults with push configured (``StateTable/render(_:settings:)``).
    let settings: SignalingSettings
    /// A session id no call has: what requests name while there is no call.
    static let unknownSession = String(repeating: "0", count: 32)

    private(set) var machine: CallStateMachine
    private(set) var time = SignalingTime(wall: 1_700_000_000_000, monotonic: 1_000_000)
    /// Timers scheduled and not yet fired, in scheduling order; `at` is monotonic.
    private var pending: [(timer: SignalingTimer, at: Int64)] = []
    private(set) var stored: [String: Call] = [:]
    /// The latest connection of each device, by label (see ``StateTableActor``).
    private var devices: [String: Device] = [:]
    private var labels: [DeviceAddress: String] = [:]
    private var nextConnection: UInt64 = 1
    /// The call between caller and callee that the row starts from.
    private(set) var pairSession: String?

    var pairCall: Call? { pairSession.flatMap { stored[$0] } }
    /// The session id requests name: the pair's call, or one that does not exist.
    var session: String { pairSession ?? Self.unknownSession }
    var ringTimeoutMillis: Int64 { Int64(settings.defaultRingTimeout) * 1000 }

    init(settings: SignalingSettings) {
        self.settings = settings
        machine = CallStateMachine(settings: settings)
    }

    /// Every device of the fixture but b3 connected, and the pair's call, if
    /// any, brought to `state`.
    static func at(_ state: CallStatus?, settings: SignalingSettings) throws(StateTableError) -> StateTableDriver {
        var driver = StateTableDriver(settings: settings)
        for label in ["a1", "a2", "b1", "b2", "c1"] { driver.connect(label) }
        guard let state else { return driver }
        let placed = driver.send(
            .initiateCall(receiverId: callee, callType: .audio, timeout: nil, metadata: nil),
            from: "a1")
        driver.pairSession = placed.pairCall?.sessionId
        let session = driver.session
        switch state {
        case .initiated: break
        case .ongoing: driver.send(.acceptCall(sessionId: session), from: "b1")
        case .ended:
            driver.send(.acceptCall(sessionId: session), from: "b1")
            driver.send(.endCall(sessionId: session), from: "a1")
        case .rejected: driver.send(.rejectCall(sessionId: session, status: .rejected), from: "b1")
        case .busy: driver.send(.rejectCall(sessionId: session, status: .busy), from: "b1")
        case .cancelled: driver.send(.cancelCall(sessionId: session), from: "a1")
        case .unanswered: driver.advance(by: driver.ringTimeoutMillis)
        }
        guard driver.pairCall?.status == state else {
            throw StateTableError(
                description: "setting up a call \(state.rawValue) left it "
                    + (driver.pairCall?.status.rawValue ?? "missing"))
        }
        return driver
    }

    // MARK: Inputs

    /// Connects the device `label` (again: on a new connection): a… is
    /// the caller's, b… the callee's, c… the third party's.
    @discardableResult
    mutating func connect(_ label: String) -> StateTableObservation {
        let uid = label.hasPrefix("a") ? Self.caller : label.hasPrefix("b") ? Self.callee : Self.thirdParty
        let device = Device(uid: uid, deviceId: label, address: DeviceAddress(loop: 0, connection: nextConnection))
        nextConnection += 1
        devices[label] = device
        labels[device.address] = label
        return record(machine.connect(device, requestId: "auth", now: time))
    }

    @discardableResult
    mutating func disconnect(_ label: String) -> StateTableObservation {
        guard let device = devices[label] else { return StateTableObservation() }
        return record(machine.disconnect(device, now: time))
    }

    @discardableResult
    mutating func send(_ request: ClientRequest, from label: String) -> StateTableObservation {
        guard let device = devices[label] else { return StateTableObservation() }
        return record(machine.handle(request, id: "1", from: device, now: time))
    }

    /// Moves both clocks by `millis`, firing each timer due by then at its deadline.
    @discardableResult
    mutating func advance(by millis: Int64) -> StateTableObservation {
        runTimers(until: time.monotonic + millis).observed
    }

    /// Moves the clocks to the monotonic `deadline` (firing what is due) and
    /// fires `timer` there: from the pending timers, or else as a stale
    /// timer would fire after its call moved on.
    mutating func fire(_ timer: SignalingTimer, at deadline: Int64) -> StateTableObservation {
        var (observed, fired) = runTimers(until: max(deadline, time.monotonic))
        if !fired.contains(timer) {
            pending.removeAll { $0.timer == timer }
            observed.merge(record(machine.timerFired(timer, now: time)))
        }
        return observed
    }

    /// The server stops (`calls.onRestart: end`).
    mutating func shutdown() -> StateTableObservation {
        record(machine.shutdown(now: time))
    }

    /// The server starts again `away` milliseconds later on what the store
    /// holds: a new machine, nobody connected, the old timers gone.
    mutating func restart(_ policy: RestartPolicy, after away: Int64) -> StateTableObservation {
        move(to: time.monotonic + away)
        pending = []
        machine = CallStateMachine(settings: settings)
        let live = stored.values.filter { !$0.status.isTerminal }.sorted { $0.sessionId < $1.sessionId }
        return switch policy {
        case .resume: record(machine.restore(live, graceDeadlines: [:], now: time))
        case .end: record(machine.restart(with: live, now: time))
        }
    }

    // MARK: Clock

    private mutating func runTimers(until target: Int64) -> (observed: StateTableObservation, fired: [SignalingTimer]) {
        var observed = StateTableObservation()
        var fired: [SignalingTimer] = []
        while let index = nextDue(by: target) {
            let (timer, at) = pending.remove(at: index)
            move(to: at)
            fired.append(timer)
            observed.merge(record(machine.timerFired(timer, now: time)))
        }
        move(to: target)
        return (observed, fired)
    }

    /// The earliest pending timer due by `deadline` (ties: the first scheduled).
    private func nextDue(by deadline: Int64) -> Int? {
        var best: Int?
        for (index, entry) in pending.enumerated() where entry.at <= deadline {
            if let current = best, pending[current].at <= entry.at { continue }
            best = index
        }
        return best
    }

    private mutating func move(to monotonic: Int64) {
        guard monotonic > time.monotonic else { return }
        time = SignalingTime(wall: time.wall + monotonic - time.monotonic, monotonic: monotonic)
    }

    // MARK: Reading outputs

    /// Keeps what the store and the timers would, and reads `output` as the table shows it.
    private mutating func record(_ output: SignalingOutput) -> StateTableObservation {
        var observed = StateTableObservation()
        for change in output.changes {
            stored[change.after.sessionId] = change.after
            if isPair(change.after) { observed.pairCall = change.after }
        }
        for grace in output.restartGrace {
            switch grace {
            case .set(let uid, let deadline):
                observed.timers.append(.scheduled(.restartGrace(party(uid)), inMillis: deadline - time.wall))
            case .clear(let uid):
                observed.timers.append(.cancelled(.restartGrace(party(uid))))
            }
        }
        for action in output.actions {
            switch action {
            case .reply(_, _, let result):
                observed.reply = reply(result)
            case .replyResuming(_, _, let authentication, _):
                observed.reply = reply(.success(.authenticated(authentication)))
            case .resolveSession(_, _, let sessionId, let uid):
                observed.reply = .error(
                    SignalError.notLive(sessionId, stored: stored[sessionId], askedBy: uid).code,
                    fromStore: true)
            case .event(_, let recipients):
                observed.events.formUnion(recipients.map(label))
            case .signal(_, let address):
                observed.events.insert("\(label(address)) signal")
            case .close(let address, let code, _):
                observed.events.insert("\(label(address)) closed \(code.rawValue)")
            case .schedule(let timer, let at):
                pending.removeAll { $0.timer == timer }
                pending.append((timer, at))
                observed.timers.append(.scheduled(kind(timer), inMillis: at - time.monotonic))
            case .cancel(let timer):
                pending.removeAll { $0.timer == timer }
                observed.timers.append(.cancelled(kind(timer)))
            case .push:
                observed.pushes.append(.ring)
            case .pushStopped:
                observed.pushes.append(.stopped)
            }
        }
        return observed
    }

    private func reply(_ result: SignalingReply) -> StateTableReply {
        switch result {
        case .failure(let error): return .error(error.code, fromStore: false)
        case .success(.initiated(let call, let ringing)):
            return .ok(call: call.status, ringing: ringing, otherCall: !isPair(call))
        case .success(.call(let call)), .success(.activeCall(let call?)):
            return .ok(call: call.status, ringing: nil, otherCall: !isPair(call))
        case .success(.authenticated(let authentication)):
            return .ok(
                call: authentication.activeCall?.status, ringing: nil,
                otherCall: authentication.activeCall.map { !isPair($0) } ?? false)
        case .success(.activeCall(nil)), .success(.callLogs), .success(.pushToken), .success(.pushTokenRemoved),
            .success(.signalled), .success(.iceServers), .success(.mediaToken), .success(.doNotDisturb):
            return .ok(call: nil, ringing: nil, otherCall: false)
        }
    }

    private func isPair(_ call: Call) -> Bool {
        Set([call.initiator, call.receiver]) == [Self.caller, Self.callee]
    }

    private func party(_ uid: String) -> StateTableParty {
        uid == Self.caller ? .caller : uid == Self.callee ? .callee : .thirdParty
    }

    private func kind(_ timer: SignalingTimer) -> StateTableTimer.Kind {
        switch timer {
        case .ring: .ring
        case .grace(let uid, _): .grace(party(uid))
        }
    }

    private func label(_ address: DeviceAddress) -> String { labels[address] ?? address.description }
}

/// What one input did, as the table shows it.
struct StateTableObservation {
    /// The call between caller and callee as the last change of it left it.
    var pairCall: Call?
    var reply: StateTableReply?
    var events: Set<String> = []
    var timers: [StateTableTimer] = []
    var pushes: [StateTablePush] = []

    mutating func merge(_ other: StateTableObservation) {
        pairCall = other.pairCall ?? pairCall
        reply = other.reply ?? reply
        events.formUnion(other.events)
        timers += other.timers
        pushes += other.pushes
    }
}
