import SignalProtocol
import SignalSystem

/// The ringing semantics, free of I/O: presence of devices, live calls, busy,
/// glare, ring timeouts, reconnect grace, shutdown and restart. Every input
/// is a `mutating func` taking the current ``SignalingTime`` and returning a
/// ``SignalingOutput``: the ``CallChange``s to commit and the actions to
/// perform once they are committed. Timers are actions too, so tests run the
/// semantics on a manual clock.
///
/// Invariant: a user is a party of at most one live (non-terminal) call.
/// Terminal calls leave the machine; the store keeps them.
public struct CallStateMachine: Sendable {
    package let settings: SignalingSettings
    /// Live calls by session id.
    package private(set) var liveCalls: [String: Call] = [:]
    /// The live call of each user who has one.
    private var liveCallOfUser: [String: String] = [:]
    /// The ring deadline of each ringing call, on the monotonic clock.
    private(set) var ringDeadlines: [String: Int64] = [:]
    /// Connected devices: uid → device id → address.
    package private(set) var devices: [String: [String: DeviceAddress]] = [:]
    /// What ringd keeps about users (profiles, do-not-disturb): every stored
    /// record on one node; in a cluster's transaction, its users' records.
    package private(set) var users: [String: UserRecord] = [:]
    /// The current grace period of each user (see ``SignalingTimer/grace(uid:generation:)``).
    package var graceGenerations: [String: UInt64] = [:]
    /// The last grace generation handed out; never repeats, so a stale timer
    /// can never match a later grace period.
    private var lastGraceGeneration: UInt64 = 0
    /// The restart grace deadline (wall clock, ms) of each party of a
    /// restored call that has not come back yet; kept in the store too, so
    /// that no later start extends it.
    var restartGraceDeadlines: [String: Int64] = [:]
    /// The store-wide position of the last change made (see ``Call/seq``).
    private(set) var lastSeq: Int64 = 0
    /// The highest position the store has reserved: positions up to it are
    /// handed out without writing the store's counter, which is raised a
    /// block at a time (a crash skips what was left of the block).
    private(set) var reservedSeq: Int64 = 0
    /// Positions reserved at once.
    static let seqReservationBlock: Int64 = 1000
    /// The store's epoch (``Authentication/epoch``): what positions are of.
    /// Nil before the store said (a machine that never saw one).
    package private(set) var storeEpoch: String?
    /// Each user's recently placed calls, for replays and the per-user limit.
    package internal(set) var recentInitiates: [String: RecentInitiates] = [:]
    /// When (wall clock) forgetting what ``recentInitiates`` no longer needs is due.
    var nextInitiateSweep: Int64 = 0
    private let makeSessionId: @Sendable () -> String

    /// A machine with no devices and no calls. `makeSessionId` must return
    /// unique ids (tests inject a deterministic one).
    public init(settings: SignalingSettings, makeSessionId: @escaping @Sendable () -> String = SessionID.random) {
        self.settings = settings
        self.makeSessionId = makeSessionId
    }

    /// The live call `uid` is a party of.
    public func liveCall(of uid: String) -> Call? {
        liveCallOfUser[uid].flatMap { liveCalls[$0] }
    }

    public func liveCall(sessionId: String) -> Call? { liveCalls[sessionId] }

    // MARK: Presence

    /// A device authenticated. Replaces a device of the same uid and id
    /// (closing the old connection with 4003), refuses one over the per-user
    /// limit (error result, then close 4001), ends the user's grace period,
    /// and replies with the user's live call, and with what changed after
    /// `resumingAfter` when the device resumes. A position of another store
    /// epoch than ``storeEpoch`` (`resumingEpoch`; nil: the store's own, as
    /// clients that know no epochs send) is not resumed from: the store may
    /// have lost changes it had acknowledged, or never made them, so the
    /// device gets `resumed: false` and goes by the snapshot.
    public mutating func connect(
        _ device: Device, requestId: String?, resumingAfter: Int64? = nil, resumingEpoch: String? = nil,
        now: SignalingTime
    ) -> SignalingOutput {
        var output = SignalingOutput()
        var userDevices = devices[device.uid] ?? [:]
        if let previous = userDevices[device.deviceId] {
            if previous != device.address {
                output.actions.append(
                    .close(previous, code: .replaced, reason: "replaced by a new connection of this device"))
            }
        } else if userDevices.count >= settings.maxDevicesPerUser {
            output.actions.append(
                .reply(
                    device.address, id: requestId,
                    .failure(
                        SignalError(
                            .tooManyDevices, "\(device.uid) already has \(settings.maxDevicesPerUser) devices connected"
                        ))))
            output.actions.append(.close(device.address, code: .notAuthenticated, reason: "too many devices"))
            return output
        }
        userDevices[device.deviceId] = device.address
        devices[device.uid] = userDevices
        graceGenerations[device.uid] = nil
        endRestartGrace(of: device.uid, into: &output)
        let doNotDisturb = users[device.uid]?.doNotDisturb
        let authentication = Authentication(
            uid: device.uid, deviceId: device.deviceId, activeCall: liveCall(of: device.uid),
            seq: lastSeq, epoch: storeEpoch,
            doNotDisturb: doNotDisturb.flatMap { $0.mode(at: now.wall) == .off ? nil : $0 })
        if resumingAfter != nil, let resumingEpoch, resumingEpoch != storeEpoch {
            var answer = authentication
            answer.resume = ResumeOutcome(resumed: false, calls: [])
            output.actions.append(.reply(device.address, id: requestId, .success(.authenticated(answer))))
        } else if let resumingAfter {
            output.actions.append(
                .replyResuming(device.address, id: requestId, authentication, afterSeq: resumingAfter))
        } else {
            output.actions.append(.reply(device.address, id: requestId, .success(.authenticated(authentication))))
        }
        return output
    }

    /// A device's connection closed. When it was the user's last device and the
    /// user is in a live call, the grace period starts.
    public mutating func disconnect(_ device: Device, now: SignalingTime) -> SignalingOutput {
        var output = SignalingOutput()
        guard devices[device.uid]?[device.deviceId] == device.address else { return output }
        devices[device.uid]?[device.deviceId] = nil
        guard devices[device.uid]?.isEmpty == true else { return output }
        devices[device.uid] = nil
        guard liveCallOfUser[device.uid] != nil else {
            graceGenerations[device.uid] = nil
            return output
        }
        startGrace(of: device.uid, now: now, into: &output)
        return output
    }

    /// The ids of `uid`'s connected devices, sorted.
    func connectedDeviceIds(of uid: String) -> [String] { (devices[uid] ?? [:]).keys.sorted() }

    /// The uid and device id of the device connected at `address`, if any
    /// (the test tap names devices; a scan, as the tap is for tests).
    package func deviceName(at address: DeviceAddress) -> (uid: String, deviceId: String)? {
        for (uid, userDevices) in devices {
            if let deviceId = userDevices.first(where: { $0.value == address })?.key { return (uid, deviceId) }
        }
        return nil
    }

    /// Whether `device` is the registered device at its address.
    func isRegistered(_ device: Device) -> Bool {
        devices[device.uid]?[device.deviceId] == device.address
    }

    /// Starts a new grace period for `uid`, whose devices are all gone:
    /// the reconnect grace from `now`, or until the monotonic `deadline`.
    mutating func startGrace(
        of uid: String, now: SignalingTime, until deadline: Int64? = nil,
        into output: inout SignalingOutput
    ) {
        lastGraceGeneration += 1
        graceGenerations[uid] = lastGraceGeneration
        output.actions.append(
            .schedule(
                .grace(uid: uid, generation: lastGraceGeneration),
                at: deadline ?? now.monotonic + settings.reconnectGraceMillis))
    }

    /// `uid` came back or its call ended: its restart grace is over, in the store too.
    mutating func endRestartGrace(of uid: String, into output: inout SignalingOutput) {
        if restartGraceDeadlines.removeValue(forKey: uid) != nil { output.restartGrace.append(.clear(uid: uid)) }
    }

    // MARK: Changes

    /// Records a change: gives it the next position in the sequence, keeps
    /// the call live or retires it, keeps its ring deadline while it rings,
    /// queues the change for the store, and tells every device of both
    /// parties except `actor`. Returns the call as changed.
    @discardableResult
    mutating func commit(
        _ change: CallChange, except actor: DeviceAddress?, now: SignalingTime,
        into output: inout SignalingOutput
    ) -> Call {
        var change = change
        lastSeq += 1
        change.after.seq = lastSeq
        if lastSeq > reservedSeq {
            reservedSeq = lastSeq + Self.seqReservationBlock - 1
            output.seqReservation = reservedSeq
        }
        let call = change.after
        if call.status == .initiated {
            if ringDeadlines[call.sessionId] == nil {
                let deadline = now.monotonic(atWall: call.ringDeadline)
                ringDeadlines[call.sessionId] = deadline
                output.actions.append(.schedule(.ring(sessionId: call.sessionId), at: deadline))
                if settings.pushes && !call.silent {
                    output.actions.append(.push(call, connected: connectedDeviceIds(of: call.receiver)))
                }
            }
        } else if ringDeadlines.removeValue(forKey: call.sessionId) != nil {
            output.actions.append(.cancel(.ring(sessionId: call.sessionId)))
            if settings.pushes && !call.silent { output.actions.append(.pushStopped(call)) }
        }
        if call.status.isTerminal {
            rememberEnd(of: call)
            liveCalls[call.sessionId] = nil
            for uid in [call.initiator, call.receiver] where liveCallOfUser[uid] == call.sessionId {
                liveCallOfUser[uid] = nil
                endRestartGrace(of: uid, into: &output)
            }
        } else {
            liveCalls[call.sessionId] = call
            liveCallOfUser[call.initiator] = call.sessionId
            liveCallOfUser[call.receiver] = call.sessionId
        }
        output.changes.append(change)
        let recipients = [call.initiator, call.receiver].flatMap { uid in
            (devices[uid] ?? [:]).values.sorted(by: Self.addressOrder).filter { $0 != actor }
        }
        if !recipients.isEmpty { output.actions.append(.event(call, to: recipients)) }
        return call
    }

    /// Applies `transition` to the live call `call` and commits the change.
    mutating func commit(
        _ transition: CallTransition, to call: Call, by actor: CallActor, except address: DeviceAddress?,
        now: SignalingTime, into output: inout SignalingOutput
    ) throws(SignalError) -> Call {
        let next = try call.applying(transition, by: actor, at: now.wall)
        return commit(
            CallChange(before: call, after: next, transition: transition, actor: actor), except: address,
            now: now, into: &output)
    }

    /// Takes `call`, live in the store, into the machine as it is.
    mutating func adopt(_ call: Call, now: SignalingTime) {
        guard !call.status.isTerminal else { return }
        liveCalls[call.sessionId] = call
        liveCallOfUser[call.initiator] = call.sessionId
        liveCallOfUser[call.receiver] = call.sessionId
        if call.status == .initiated { ringDeadlines[call.sessionId] = now.monotonic(atWall: call.ringDeadline) }
    }

    /// Continues the sequence after `seq`, the highest position the store
    /// holds as handed out or reserved; the next change reserves anew.
    /// Also after a failed commit, whose reservation may be lost.
    /// `epoch`: the store's (``storeEpoch``), when it has one.
    package mutating func continueSequence(after seq: Int64, epoch: String? = nil) {
        lastSeq = max(lastSeq, seq)
        reservedSeq = lastSeq
        if let epoch { storeEpoch = epoch }
    }

    /// Drops every live call (before adopting the store's), and the
    /// remembered copies of live ones, which a retry finds among the
    /// adopted calls if the store has them.
    mutating func forgetLiveCalls() {
        liveCalls = [:]
        liveCallOfUser = [:]
        ringDeadlines = [:]
        recentInitiates = recentInitiates.mapValues { recent in
            RecentInitiates(placedAt: recent.placedAt, calls: recent.calls.filter { $0.value.status.isTerminal })
        }
    }

    /// Makes this (new) machine the part of a cluster's state one
    /// transaction locked (docs/CLUSTER.md): the live calls of its users,
    /// their devices on every node and their grace periods. Positions after
    /// `seq` up to `reservedThrough` are the transaction's to hand out, and
    /// so are grace generations after `seq`, which no other transaction uses.
    /// `epoch`: the store's, as the transaction's connection found it.
    /// `recentInitiates`: what the store says of the users' recently placed calls.
    package mutating func seed(
        calls: [Call], devices: [String: [String: DeviceAddress]], graceGenerations: [String: UInt64],
        users: [UserRecord] = [], after seq: Int64, reservedThrough: Int64, epoch: String? = nil,
        now: SignalingTime, recentInitiates: [String: RecentInitiates] = [:]
    ) {
        for call in calls { adopt(call, now: now) }
        for record in users { remember(record) }
        self.recentInitiates = recentInitiates
        self.devices = devices
        self.graceGenerations = graceGenerations
        lastSeq = seq
        reservedSeq = reservedThrough
        storeEpoch = epoch
        lastGraceGeneration = UInt64(max(0, seq))
    }

    /// Keeps `record` as its user's (committed to the store already),
    /// forgetting one that sets nothing.
    package mutating func remember(_ record: UserRecord) {
        users[record.uid] = record.isEmpty ? nil : record
    }

    func newSessionId() -> String { makeSessionId() }

    /// Deterministic fan-out order, so tests and logs are stable.
    static func addressOrder(_ lhs: DeviceAddress, _ rhs: DeviceAddress) -> Bool {
        (lhs.node, lhs.loop, lhs.connection) < (rhs.node, rhs.loop, rhs.connection)
    }
}

/// Session ids: 128 random bits as 32 lowercase hex digits.
public enum SessionID {
    @Sendable public static func random() -> String {
        withUnsafeTemporaryAllocation(byteCount: 16, alignment: 1) { bytes in
            fillRandom(bytes)
            return String(unsafeUninitializedCapacity: 32) { text in
                for (index, byte) in bytes.enumerated() {
                    text[2 * index] = hexDigits[Int(byte >> 4)]
                    text[2 * index + 1] = hexDigits[Int(byte & 0x0F)]
                }
                return 32
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
