import SignalProtocol

/// The ringing semantics, free of I/O: presence of devices, live calls, busy,
/// glare, ring timeouts, reconnect grace and shutdown. Every input is a
/// `mutating func` taking the current time (milliseconds since the Unix
/// epoch) and returning a ``SignalingOutput``; timers are actions the driver
/// performs, so tests run the semantics on a manual clock.
///
/// Invariant: a user is a party of at most one live (non-terminal) call.
/// Terminal calls leave the machine; the store keeps them.
public struct CallStateMachine: Sendable {
    let settings: SignalingSettings
    /// Live calls by session id.
    private(set) var liveCalls: [String: Call] = [:]
    /// The live call of each user who has one.
    private var liveCallOfUser: [String: String] = [:]
    /// Connected devices: uid → device id → address.
    private(set) var devices: [String: [String: DeviceAddress]] = [:]
    /// The current grace period of each user (see ``SignalingTimer/grace(uid:generation:)``).
    var graceGenerations: [String: UInt64] = [:]
    /// The last grace generation handed out; never repeats, so a stale timer
    /// can never match a later grace period.
    private var lastGraceGeneration: UInt64 = 0
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

    /// A live call by session id.
    public func liveCall(sessionId: String) -> Call? { liveCalls[sessionId] }

    // MARK: Presence

    /// A device authenticated. Replaces a device of the same uid and id
    /// (closing the old connection with 4003), refuses one over the per-user
    /// limit (error result, then close 4001), ends the user's grace period,
    /// and replies with the user's live call.
    public mutating func connect(_ device: Device, requestId: String?, now: Int64) -> SignalingOutput {
        var output = SignalingOutput()
        var userDevices = devices[device.uid] ?? [:]
        if let previous = userDevices[device.deviceId] {
            if previous != device.address {
                output.actions.append(.close(previous, code: 4003, reason: "replaced by a new connection of this device"))
            }
        } else if userDevices.count >= settings.maxDevicesPerUser {
            output.actions.append(.reply(device.address, id: requestId, .failure(SignalError(
                .tooManyDevices, "\(device.uid) already has \(settings.maxDevicesPerUser) devices connected"))))
            output.actions.append(.close(device.address, code: 4001, reason: "too many devices"))
            return output
        }
        userDevices[device.deviceId] = device.address
        devices[device.uid] = userDevices
        graceGenerations[device.uid] = nil
        output.actions.append(.reply(device.address, id: requestId, .success(.object([
            ("user", .object([("uid", .string(device.uid))])),
            ("deviceId", .string(device.deviceId)),
            ("activeCall", liveCall(of: device.uid)?.json ?? .null),
        ]))))
        return output
    }

    /// A device's connection closed. When it was the user's last device and the
    /// user is in a live call, the grace period starts.
    public mutating func disconnect(_ device: Device, now: Int64) -> SignalingOutput {
        var output = SignalingOutput()
        guard devices[device.uid]?[device.deviceId] == device.address else { return output }
        devices[device.uid]?[device.deviceId] = nil
        guard devices[device.uid]?.isEmpty == true else { return output }
        devices[device.uid] = nil
        guard liveCallOfUser[device.uid] != nil else {
            graceGenerations[device.uid] = nil
            return output
        }
        lastGraceGeneration += 1
        let generation = lastGraceGeneration
        graceGenerations[device.uid] = generation
        output.actions.append(.schedule(.grace(uid: device.uid, generation: generation),
                                        at: now + settings.reconnectGraceMillis))
        return output
    }

    /// Whether `device` is the registered device at its address.
    func isRegistered(_ device: Device) -> Bool {
        devices[device.uid]?[device.deviceId] == device.address
    }

    // MARK: Changes

    /// Records a new state of a call: keeps it live or retires it, saves it,
    /// and tells every device of both parties except `actor`.
    mutating func commit(_ call: Call, except actor: DeviceAddress?, into output: inout SignalingOutput) {
        if liveCalls[call.sessionId]?.status == .initiated, call.status != .initiated {
            output.actions.append(.cancel(.ring(sessionId: call.sessionId)))
        }
        if call.status.isTerminal {
            liveCalls[call.sessionId] = nil
            for uid in [call.initiator, call.receiver] where liveCallOfUser[uid] == call.sessionId {
                liveCallOfUser[uid] = nil
            }
        } else {
            liveCalls[call.sessionId] = call
            liveCallOfUser[call.initiator] = call.sessionId
            liveCallOfUser[call.receiver] = call.sessionId
        }
        output.saves.append(call)
        for uid in [call.initiator, call.receiver] {
            for address in (devices[uid] ?? [:]).values.sorted(by: Self.addressOrder) where address != actor {
                output.actions.append(.event(address, call))
            }
        }
    }

    /// A new session id.
    func newSessionId() -> String { makeSessionId() }

    /// Deterministic fan-out order, so tests and logs are stable.
    static func addressOrder(_ lhs: DeviceAddress, _ rhs: DeviceAddress) -> Bool {
        (lhs.loop, lhs.connection) < (rhs.loop, rhs.connection)
    }
}

/// Session ids: 128 random bits as 32 lowercase hex digits.
public enum SessionID {
    /// A fresh random session id.
    @Sendable public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        return hex(high) + hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
