import SignalProtocol

/// A ring as ringd pushes it to a sleeping iPhone (docs/PUSH.md, "The
/// payloads"): the APNs body's members, parsed once, typed.
///
/// PushKit hands the payload over as `[AnyHashable: Any]`; the Apple
/// adapter serialises it to JSON and parses that into a ``JSONValue``, so
/// everything here stays portable and testable on Linux. The string form
/// (``init(strings:)``) reads FCM's data messages, whose values are all
/// strings, for an app that relays those.
public struct VoIPPush: Hashable, Sendable {
    public var sessionId: String
    public var callerUid: String
    public var callType: CallType
    /// Unix milliseconds; nil if the payload did not say.
    public var initiatedAt: Int64?
    /// The ring timeout in whole seconds; nil if the payload did not say.
    public var ringTimeout: Int64?
    /// The caller's name from their profile, when ringd knows one.
    public var callerName: String?
    public var callerAvatarUrl: String?

    public init(
        sessionId: String, callerUid: String, callType: CallType, initiatedAt: Int64? = nil,
        ringTimeout: Int64? = nil, callerName: String? = nil, callerAvatarUrl: String? = nil
    ) {
        self.sessionId = sessionId
        self.callerUid = callerUid
        self.callType = callType
        self.initiatedAt = initiatedAt
        self.ringTimeout = ringTimeout
        self.callerName = callerName
        self.callerAvatarUrl = callerAvatarUrl
    }

    /// The APNs body. Only `sessionId` and `callerUid` are required: a
    /// payload with an unknown `callType` still rings, as audio, because
    /// iOS ends an app that reports nothing for a VoIP push.
    public init(json: JSONValue) throws(VoIPPushError) {
        guard case .object = json else { throw VoIPPushError(message: "the payload is not a JSON object") }
        try self.init(
            sessionId: json["sessionId"]?.stringValue, callerUid: json["callerUid"]?.stringValue,
            callType: json["callType"]?.stringValue, initiatedAt: json["initiatedAt"]?.integerValue,
            ringTimeout: json["ringTimeout"]?.integerValue, callerName: json["callerName"]?.stringValue,
            callerAvatarUrl: json["callerAvatarUrl"]?.stringValue)
    }

    /// A payload whose values are all strings (an FCM data message).
    public init(strings: [String: String]) throws(VoIPPushError) {
        try self.init(
            sessionId: strings["sessionId"], callerUid: strings["callerUid"], callType: strings["callType"],
            initiatedAt: strings["initiatedAt"].flatMap { Int64($0) },
            ringTimeout: strings["ringTimeout"].flatMap { Int64($0) }, callerName: strings["callerName"],
            callerAvatarUrl: strings["callerAvatarUrl"])
    }

    private init(
        sessionId: String?, callerUid: String?, callType: String?, initiatedAt: Int64?, ringTimeout: Int64?,
        callerName: String?, callerAvatarUrl: String?
    ) throws(VoIPPushError) {
        guard let sessionId, !sessionId.isEmpty else { throw VoIPPushError(message: "no sessionId") }
        guard let callerUid, !callerUid.isEmpty else { throw VoIPPushError(message: "no callerUid") }
        self.init(
            sessionId: sessionId, callerUid: callerUid, callType: callType.flatMap(CallType.init) ?? .audio,
            initiatedAt: initiatedAt, ringTimeout: ringTimeout,
            callerName: callerName.flatMap { $0.isEmpty ? nil : $0 }, callerAvatarUrl: callerAvatarUrl)
    }

    /// When the call stops ringing at the latest (`initiatedAt + ringTimeout`
    /// seconds), in Unix milliseconds; nil if the payload lacks either.
    public var ringDeadline: Int64? {
        guard let initiatedAt, let ringTimeout else { return nil }
        return initiatedAt + ringTimeout * 1000
    }

    /// What CallKit shows: the profile name, or else the uid.
    public var displayName: String { callerName ?? callerUid }
}

/// A VoIP push that is not a ring ringd sent.
public struct VoIPPushError: Error, Hashable, Sendable {
    public var message: String
}
