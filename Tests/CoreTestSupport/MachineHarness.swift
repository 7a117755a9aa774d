import SignalCore
import SignalProtocol
import Synchronization
import Testing

// A CallStateMachine on a manual clock for tests, in a target of its own
// (public API) so that SignalCoreTests and SignalServerTests (the store
// migration, webhook triggers) drive the machine the same way.

/// Session ids "s1", "s2", … in the order the machine asks for them.
public final class SequentialSessionIds: Sendable {
    private let counter = Mutex(0)

    public func next() -> String {
        counter.withLock { count in
            count += 1
            return "s\(count)"
        }
    }
}

/// A ``CallStateMachine`` on a manual clock, in the spirit of hummingbird's
/// `MockClock`: it owns the machine, the current time and the timers the
/// machine scheduled. `advance(by:)` / `advance(to:)` move both clocks and
/// fire every due timer in deadline order (ties in scheduling order), each at
/// its own deadline; `stepWallClock(by:)` moves the wall clock alone, as an
/// NTP step or an operator would. The monotonic clock starts where the wall
/// clock does, so until the wall clock steps, deadlines read as wall times.
/// Every output is recorded in ``outputs``.
public final class MachineHarness {
    public private(set) var machine: CallStateMachine
    /// The wall clock: milliseconds since the Unix epoch.
    public private(set) var now: Int64
    /// The monotonic clock, in milliseconds; timers are due on it.
    public private(set) var monotonic: Int64
    /// Timers scheduled and not yet fired, in scheduling order; `at` is monotonic.
    public private(set) var pendingTimers: [(timer: SignalingTimer, at: Int64)] = []
    /// Every output the machine produced, in order.
    public private(set) var outputs: [SignalingOutput] = []
    public let settings: SignalingSettings
    private var nextConnection: UInt64 = 1
    private var nextRequest = 0

    public static let start: Int64 = 1_700_000_000_000

    public init(settings: SignalingSettings = SignalingSettings(), now: Int64 = MachineHarness.start) {
        let ids = SequentialSessionIds()
        self.settings = settings
        self.now = now
        monotonic = now
        machine = CallStateMachine(settings: settings, makeSessionId: { ids.next() })
    }

    /// Gives the machine a user's record, as the service does once it is stored.
    public func remember(_ record: UserRecord) { machine.remember(record) }

    // MARK: Devices

    /// A device of `uid` at a fresh address (not connected yet).
    public func newDevice(_ uid: String, _ deviceId: String, loop: Int = 0) -> Device {
        defer { nextConnection += 1 }
        return Device(uid: uid, deviceId: deviceId, address: DeviceAddress(loop: loop, connection: nextConnection))
    }

    /// Both clocks as the machine reads them.
    public var time: SignalingTime { SignalingTime(wall: now, monotonic: monotonic) }

    @discardableResult
    public func connect(_ device: Device, requestId: String? = "auth") -> SignalingOutput {
        record(machine.connect(device, requestId: requestId, now: time))
    }

    /// A new device of `uid`, connected; records an issue unless the connect succeeded.
    @discardableResult
    public func online(
        _ uid: String, _ deviceId: String = "d1", sourceLocation: SourceLocation = #_sourceLocation
    ) -> Device {
        let device = newDevice(uid, deviceId)
        let output = connect(device)
        if case .success = output.reply(to: device) {
        } else {
            Issue.record("connecting \(uid)/\(deviceId) failed: \(output.actions)", sourceLocation: sourceLocation)
        }
        return device
    }

    @discardableResult
    public func disconnect(_ device: Device) -> SignalingOutput {
        record(machine.disconnect(device, now: time))
    }

    // MARK: Requests

    /// Sends `request` from `device` with a fresh request id (or `id`).
    @discardableResult
    public func send(_ request: ClientRequest, from device: Device, id: String? = nil) -> SignalingOutput {
        nextRequest += 1
        return record(machine.handle(request, id: id ?? "r\(nextRequest)", from: device, now: time))
    }

    @discardableResult
    public func initiate(
        from device: Device, to receiver: String, callType: CallType = .audio, timeout: RingTimeout? = nil,
        metadata: JSONValue? = nil, clientCallId: String? = nil
    ) -> SignalingOutput {
        send(
            .initiateCall(
                receiverId: receiver, callType: callType, timeout: timeout, metadata: metadata,
                clientCallId: clientCallId), from: device)
    }

    /// Starts a call and returns its session id; records an issue when the result has no call.
    @discardableResult
    public func ring(
        from device: Device, to receiver: String, timeout: RingTimeout? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        let output = initiate(from: device, to: receiver, timeout: timeout)
        guard let call = output.resultCall(to: device) else {
            Issue.record("initiateCall failed: \(output.actions)", sourceLocation: sourceLocation)
            return "none"
        }
        return call.sessionId
    }

    @discardableResult public func accept(_ sessionId: String, by device: Device) -> SignalingOutput {
        send(.acceptCall(sessionId: sessionId), from: device)
    }

    @discardableResult public func reject(
        _ sessionId: String, by device: Device, status: CallStatus = .rejected, reason: String? = nil
    ) -> SignalingOutput {
        send(.rejectCall(sessionId: sessionId, status: status, reason: reason), from: device)
    }

    @discardableResult public func cancel(_ sessionId: String, by device: Device) -> SignalingOutput {
        send(.cancelCall(sessionId: sessionId), from: device)
    }

    @discardableResult public func end(_ sessionId: String, by device: Device) -> SignalingOutput {
        send(.endCall(sessionId: sessionId), from: device)
    }

    @discardableResult public func ringing(_ sessionId: String, by device: Device) -> SignalingOutput {
        send(.ringing(sessionId: sessionId), from: device)
    }

    /// The push side reports nothing can ring the callee of `sessionId`.
    @discardableResult public func unreachable(_ sessionId: String) -> SignalingOutput {
        record(machine.unreachable(sessionId: sessionId, now: time))
    }

    @discardableResult public func shutdown() -> SignalingOutput {
        record(machine.shutdown(now: time))
    }

    /// A start on a store that holds `calls` live (`calls.onRestart: resume`).
    @discardableResult
    public func restore(
        _ calls: [Call], graceDeadlines: [String: Int64] = [:], lastSeq: Int64 = 0, epoch: String? = nil
    ) -> SignalingOutput {
        machine.continueSequence(after: lastSeq, epoch: epoch)
        return record(machine.restore(calls, graceDeadlines: graceDeadlines, now: time))
    }

    @discardableResult
    public func connect(_ device: Device, resumingAfter seq: Int64, epoch: String? = nil) -> SignalingOutput {
        record(machine.connect(device, requestId: "auth", resumingAfter: seq, resumingEpoch: epoch, now: time))
    }

    // MARK: Clock

    /// Moves both clocks by `millis`, firing due timers.
    @discardableResult
    public func advance(by millis: Int64) -> SignalingOutput {
        precondition(millis >= 0, "the manual clock only moves forward")
        let target = monotonic + millis
        var merged = SignalingOutput()
        while let index = nextDueTimer(by: target) {
            let (timer, at) = pendingTimers.remove(at: index)
            if at > monotonic {
                now += at - monotonic
                monotonic = at
            }
            merged.append(record(machine.timerFired(timer, now: time)))
        }
        now += target - monotonic
        monotonic = target
        return merged
    }

    /// Moves both clocks until the monotonic clock reads `deadline`, firing
    /// every timer due by then in deadline order, each at its deadline.
    /// Returns the merged output.
    @discardableResult
    public func advance(to deadline: Int64) -> SignalingOutput {
        advance(by: deadline - monotonic)
    }

    /// Steps the wall clock alone by `millis` (negative: back).
    public func stepWallClock(by millis: Int64) {
        now += millis
    }

    /// Fires `timer` right now, whatever its deadline (as a driver with a
    /// clock skew or a stale timer would); the pending list is untouched.
    @discardableResult
    public func fire(_ timer: SignalingTimer) -> SignalingOutput {
        record(machine.timerFired(timer, now: time))
    }

    /// The deadline of the pending timer `timer`, if any.
    public func deadline(of timer: SignalingTimer) -> Int64? {
        pendingTimers.first { $0.timer == timer }?.at
    }

    private func nextDueTimer(by deadline: Int64) -> Int? {
        var best: Int?
        for (index, entry) in pendingTimers.enumerated() where entry.at <= deadline {
            if best == nil || entry.at < pendingTimers[best!].at { best = index }
        }
        return best
    }

    private func record(_ output: SignalingOutput) -> SignalingOutput {
        outputs.append(output)
        for action in output.actions {
            switch action {
            case .schedule(let timer, let at):
                pendingTimers.removeAll { $0.timer == timer }
                pendingTimers.append((timer, at))
            case .cancel(let timer): pendingTimers.removeAll { $0.timer == timer }
            default: break
            }
        }
        return output
    }

    // MARK: Queries over everything recorded

    /// Every event `device` received so far, in order.
    public func allEvents(to device: Device) -> [Call] {
        outputs.flatMap { $0.events(to: device) }
    }

    /// Every save so far, in order.
    public var allSaves: [Call] { outputs.flatMap(\.saves) }

    /// Every change so far, in order.
    public var allChanges: [CallChange] { outputs.flatMap(\.changes) }
}

// MARK: - Reading outputs

extension SignalingOutput {
    public mutating func append(_ other: SignalingOutput) {
        changes += other.changes
        restartGrace += other.restartGrace
        actions += other.actions
    }

    /// The calls as each change left them, in order.
    public var saves: [Call] { changes.map(\.after) }

    /// Replies in order, with their address, request id and wire data.
    public var replies: [(address: DeviceAddress, id: String?, result: Result<JSONValue, SignalError>)] {
        actions.compactMap {
            if case .reply(let address, let id, let result) = $0 { return (address, id, result.map(\.json)) }
            return nil
        }
    }

    /// The one reply to `device` (nil when there is none or more than one).
    public func reply(to device: Device) -> Result<JSONValue, SignalError>? {
        let mine = replies.filter { $0.address == device.address }
        return mine.count == 1 ? mine[0].result : nil
    }

    /// The error code of the reply to `device`, if it is an error.
    public func errorCode(to device: Device) -> SignalErrorCode? {
        if case .failure(let error)? = reply(to: device) { return error.code }
        return nil
    }

    /// The data of a successful reply to `device`.
    public func resultData(to device: Device) -> JSONValue? {
        if case .success(let data)? = reply(to: device) { return data }
        return nil
    }

    /// The `call` member of a successful reply to `device`, decoded.
    public func resultCall(to device: Device) -> Call? {
        guard let json = resultData(to: device)?["call"], json != .null else { return nil }
        return try? Call(json: json)
    }

    /// Events in order, with their address.
    public var events: [(address: DeviceAddress, call: Call)] {
        actions.flatMap { action -> [(address: DeviceAddress, call: Call)] in
            if case .event(let call, let recipients) = action { return recipients.map { ($0, call) } }
            return []
        }
    }

    public func events(to device: Device) -> [Call] {
        events.filter { $0.address == device.address }.map(\.call)
    }

    /// The set of addresses that got at least one event.
    public var eventAddresses: Set<DeviceAddress> { Set(events.map(\.address)) }

    public var schedules: [(timer: SignalingTimer, at: Int64)] {
        actions.compactMap {
            if case .schedule(let timer, let at) = $0 { return (timer, at) }
            return nil
        }
    }

    public var closes: [(address: DeviceAddress, code: UInt16, reason: String)] {
        actions.compactMap {
            if case .close(let address, let code, let reason) = $0 { return (address, code.rawValue, reason) }
            return nil
        }
    }

    public var resolutions: [(address: DeviceAddress, id: String, sessionId: String, uid: String)] {
        actions.compactMap {
            if case .resolveSession(let address, let id, let sessionId, let uid) = $0 {
                return (address, id, sessionId, uid)
            }
            return nil
        }
    }
}

/// Addresses of `devices`, as a set.
public func addresses(_ devices: Device...) -> Set<DeviceAddress> {
    Set(devices.map(\.address))
}

// MARK: - Fixtures

extension MachineHarness {
    /// alice on "a-phone" and "a-laptop", bob on "b-phone" and "b-laptop", all connected.
    public static func aliceAndBob(
        settings: SignalingSettings = SignalingSettings()
    )
        -> (MachineHarness, a1: Device, a2: Device, b1: Device, b2: Device)
    {
        let harness = MachineHarness(settings: settings)
        let a1 = harness.online("alice", "a-phone")
        let a2 = harness.online("alice", "a-laptop")
        let b1 = harness.online("bob", "b-phone")
        let b2 = harness.online("bob", "b-laptop")
        return (harness, a1, a2, b1, b2)
    }

    /// The live call of `uid`.
    public func live(_ uid: String) -> Call? { machine.liveCall(of: uid) }
}
