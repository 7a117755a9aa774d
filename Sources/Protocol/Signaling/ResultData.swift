/// The `data` of a successful result, by the request it answers
/// (docs/PROTOCOL.md, "Requests and results"). A result does not say which
/// request it answers, so decoding needs the request's type.
public enum ResultData: Hashable, Sendable {
    /// `auth`: `{"user":{"uid"},"deviceId","activeCall","seq"}`, and
    /// `"resumed","calls"` when it asked to resume.
    case authenticated(Authentication)
    /// `initiateCall`: the call and how many callee devices it rings now;
    /// `replayed` when a repeat of an earlier `initiateCall` (the same
    /// `clientCallId`) answered the call that one placed, as it stands now.
    case initiated(Call, ringing: Int, replayed: Bool = false)
    /// `acceptCall`, `ringing`, `rejectCall`, `cancelCall`, `endCall`: the call as changed.
    case call(Call)
    /// `getActiveCall`: the user's live call, or null.
    case activeCall(Call?)
    /// `getCallLogs`: a page of history.
    case callLogs(CallLogPage)
    /// `registerPushToken`: the token as stored.
    case pushToken(RegisteredPushToken)
    /// `unregisterPushToken`: whether the device had a token.
    case pushTokenRemoved(Bool)
    /// `signal`: whether the peer device was connected to hear it.
    case signalled(delivered: Bool)
    /// `getIceServers`: the STUN and TURN servers for the device's peer connections.
    case iceServers(IceServerList)
    /// `getMediaToken`: where the call's media room is, and a token to join it.
    case mediaToken(MediaToken)
    /// `setDoNotDisturb`: the user's setting as stored.
    case doNotDisturb(DoNotDisturb)

    /// The wire form.
    public var json: JSONValue {
        switch self {
        case .authenticated(let authentication):
            var members: [(key: String, value: JSONValue)] = [
                ("user", .object([("uid", .string(authentication.uid))])),
                ("deviceId", .string(authentication.deviceId)),
                ("activeCall", authentication.activeCall?.json ?? .null),
                ("seq", .integer(authentication.seq)),
            ]
            if let epoch = authentication.epoch { members.append(("epoch", .string(epoch))) }
            if let setting = authentication.doNotDisturb { members.append(("doNotDisturb", setting.json)) }
            if let resume = authentication.resume {
                members.append(("resumed", .bool(resume.resumed)))
                members.append(("calls", .array(resume.calls.map(\.json))))
            }
            return .object(members)
        case .initiated(let call, let ringing, let replayed):
            var members: [(key: String, value: JSONValue)] = [
                ("call", call.json), ("ringing", .integer(Int64(ringing))),
            ]
            // Only on a replay, so a first answer reads as it always did.
            if replayed { members.append(("replayed", .bool(true))) }
            return .object(members)
        case .call(let call):
            return .object([("call", call.json)])
        case .activeCall(let call):
            return .object([("call", call?.json ?? .null)])
        case .callLogs(let page):
            return .object([
                ("logs", .array(page.logs.map(\.json))), ("next", page.next.map(JSONValue.string) ?? .null),
            ])
        case .pushToken(let token):
            return .object([("pushToken", token.json)])
        case .pushTokenRemoved(let removed):
            return .object([("removed", .bool(removed))])
        case .signalled(let delivered):
            return .object([("delivered", .bool(delivered))])
        case .iceServers(let list):
            return .object([
                ("iceServers", .array(list.iceServers.map(\.json))),
                ("expiresAt", list.expiresAt.map(JSONValue.integer) ?? .null),
            ])
        case .mediaToken(let token):
            return token.json
        case .doNotDisturb(let setting):
            return .object([("doNotDisturb", setting.json)])
        }
    }

    /// Decodes the `data` of the result to a request of `type`; fails naming
    /// the first member that is missing or wrong.
    public init(json: JSONValue, answering type: RequestType) throws(SignalError) {
        let fields = JSONFields(json)
        switch type {
        case .auth:
            var resume: ResumeOutcome?
            if fields.has("resumed") {
                guard case .array(let entries)? = json["calls"] else {
                    throw SignalError(.validation, "calls must be an array")
                }
                var calls: [Call] = []
                for entry in entries { calls.append(try Call(json: entry)) }
                resume = ResumeOutcome(resumed: try fields.bool("resumed"), calls: calls)
            }
            self = .authenticated(
                Authentication(
                    uid: try fields.nested("user").string("uid"),
                    deviceId: try fields.string("deviceId"),
                    activeCall: try Self.optionalCall(json["activeCall"], "activeCall"),
                    seq: try fields.optionalInteger("seq") ?? 0,
                    epoch: fields.has("epoch") ? try fields.string("epoch") : nil, resume: resume,
                    doNotDisturb: fields.has("doNotDisturb")
                        ? try DoNotDisturb(fields: try fields.nested("doNotDisturb")) : nil))
        case .initiateCall:
            self = .initiated(
                try Call(json: try fields.nested("call").value), ringing: Int(try fields.integer("ringing")),
                replayed: fields.has("replayed") ? try fields.bool("replayed") : false)
        case .acceptCall, .ringing, .rejectCall, .cancelCall, .endCall:
            self = .call(try Call(json: try fields.nested("call").value))
        case .getActiveCall:
            self = .activeCall(try Self.optionalCall(json["call"], "call"))
        case .getCallLogs:
            guard case .array(let entries)? = json["logs"] else {
                throw SignalError(.validation, "logs must be an array")
            }
            var logs: [CallLog] = []
            logs.reserveCapacity(entries.count)
            for entry in entries { logs.append(try CallLog(json: entry)) }
            self = .callLogs(CallLogPage(logs: logs, next: try fields.optionalString("next")))
        case .registerPushToken:
            self = .pushToken(try RegisteredPushToken(json: try fields.nested("pushToken").value))
        case .unregisterPushToken:
            self = .pushTokenRemoved(try fields.bool("removed"))
        case .signal:
            self = .signalled(delivered: try fields.bool("delivered"))
        case .getIceServers:
            guard case .array(let entries)? = json["iceServers"] else {
                throw SignalError(.validation, "iceServers must be an array")
            }
            var servers: [IceServer] = []
            for entry in entries { servers.append(try IceServer(json: entry)) }
            self = .iceServers(IceServerList(iceServers: servers, expiresAt: try fields.optionalInteger("expiresAt")))
        case .getMediaToken:
            self = .mediaToken(try MediaToken(json: json))
        case .setDoNotDisturb:
            self = .doNotDisturb(try DoNotDisturb(fields: try fields.nested("doNotDisturb")))
        }
    }

    private static func optionalCall(_ value: JSONValue?, _ name: String) throws(SignalError) -> Call? {
        guard let value, value != .null else { return nil }
        guard value.objectMembers != nil else { throw SignalError(.validation, "\(name) must be an object or null") }
        return try Call(json: value)
    }
}

/// Who a connection authenticated as, and the user's live call then.
public struct Authentication: Hashable, Sendable {
    public var uid: String
    /// The device id, as given or as the server assigned it.
    public var deviceId: String
    /// The user's live call, if any.
    public var activeCall: Call?
    /// The position of the change sequence when the device authenticated:
    /// every later change of the user's calls reaches it as an event, so
    /// this is where it resumes from until it sees a larger `seq`.
    public var seq: Int64
    /// The store's epoch: the positions this connection hears (`seq`) are
    /// of it, and a resume names it. It changes when the store could have
    /// lost changes it acknowledged (another store, a database failover),
    /// so positions of another epoch are not resumed from.
    public var epoch: String?
    /// What the device missed, when it asked to resume.
    public var resume: ResumeOutcome?
    /// The user's do-not-disturb, when it is on.
    public var doNotDisturb: DoNotDisturb?

    public init(
        uid: String, deviceId: String, activeCall: Call?, seq: Int64 = 0, epoch: String? = nil,
        resume: ResumeOutcome? = nil, doNotDisturb: DoNotDisturb? = nil
    ) {
        self.uid = uid
        self.deviceId = deviceId
        self.activeCall = activeCall
        self.seq = seq
        self.epoch = epoch
        self.resume = resume
        self.doNotDisturb = doNotDisturb
    }
}

/// The answer to `auth`'s `resume`.
public struct ResumeOutcome: Hashable, Sendable {
    /// False when the device missed more than the server keeps for a resume
    /// (docs/PROTOCOL.md, "Resume"): `calls` is then empty and the device
    /// goes by `activeCall` and its call history instead.
    public var resumed: Bool
    /// Every call of the user that changed after `afterSeq`, each in its
    /// current state, oldest change first.
    public var calls: [Call]

    public init(resumed: Bool, calls: [Call]) {
        self.resumed = resumed
        self.calls = calls
    }
}
