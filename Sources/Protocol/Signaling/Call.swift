/// A call between two users, as the wire protocol shows it.
public struct Call: Hashable, Sendable {
    /// Opaque, unique, 128 random bits; both parties' media stacks join it.
    public var sessionId: String
    /// Audio or video.
    public var callType: CallType
    public var status: CallStatus
    /// The caller's uid.
    public var initiator: String
    /// The callee's uid.
    public var receiver: String
    /// The caller's device that placed the call; nil for calls placed
    /// before ringd recorded it (store schema 8).
    public var initiatorDevice: String?
    /// Milliseconds since the Unix epoch.
    public var initiatedAt: Int64
    /// When it was accepted, if it was.
    public var acceptedAt: Int64?
    /// When it reached its terminal status.
    public var endedAt: Int64?
    /// The callee device that accepted.
    public var acceptedBy: String?
    /// The uid whose request made the terminal change; nil when the server made it.
    public var endedBy: String?
    /// Why it ended; nil while live.
    public var endReason: EndReason?
    /// What the callee said when declining (`rejectCall`'s `reason`, at
    /// most ``Call/maxRejectReasonLength`` characters); nil otherwise.
    public var rejectReason: String?
    /// The ring timeout in milliseconds, exactly as asked.
    public var timeoutMs: Int64
    /// The caller's metadata (a JSON object), if any.
    public var metadata: JSONValue?
    /// Where the call's latest change stands in the store-wide sequence of
    /// changes (each change of any call takes the next, larger value); 0 for
    /// a call not committed yet, or last changed before the store numbered
    /// changes. A device that saw it can resume after it.
    public var seq: Int64
    /// The parties' profile names and pictures as they were when the call
    /// was placed (``UserProfile``); nil for a party without a profile.
    public var initiatorName: String?
    public var initiatorAvatarUrl: String?
    public var receiverName: String?
    public var receiverAvatarUrl: String?
    /// Placed while the callee's do-not-disturb was `silent`: its devices
    /// ring without sound and nothing is pushed.
    public var silent: Bool

    public init(
        sessionId: String, callType: CallType, status: CallStatus, initiator: String, receiver: String,
        initiatorDevice: String? = nil, initiatedAt: Int64, acceptedAt: Int64? = nil, endedAt: Int64? = nil,
        acceptedBy: String? = nil, endedBy: String? = nil, endReason: EndReason? = nil, timeoutMs: Int64,
        metadata: JSONValue? = nil, seq: Int64 = 0, rejectReason: String? = nil, initiatorName: String? = nil,
        initiatorAvatarUrl: String? = nil, receiverName: String? = nil, receiverAvatarUrl: String? = nil,
        silent: Bool = false
    ) {
        self.sessionId = sessionId
        self.callType = callType
        self.status = status
        self.initiator = initiator
        self.receiver = receiver
        self.initiatorDevice = initiatorDevice
        self.initiatedAt = initiatedAt
        self.acceptedAt = acceptedAt
        self.endedAt = endedAt
        self.acceptedBy = acceptedBy
        self.endedBy = endedBy
        self.endReason = endReason
        self.timeoutMs = timeoutMs
        self.metadata = metadata
        self.seq = seq
        self.rejectReason = rejectReason
        self.initiatorName = initiatorName
        self.initiatorAvatarUrl = initiatorAvatarUrl
        self.receiverName = receiverName
        self.receiverAvatarUrl = receiverAvatarUrl
        self.silent = silent
    }

    /// The longest `rejectReason`, in characters: a quick reply ("Can't
    /// talk, in a meeting"), not a message.
    public static let maxRejectReasonLength = 140

    /// The ring timeout in whole seconds, rounded up (a ring of 200 ms
    /// shows 1): what `timeout` always said, still true as an upper bound.
    public var timeout: Int { Int(timeoutMs / 1000 + (timeoutMs % 1000 > 0 ? 1 : 0)) }

    /// For ended calls: from accept to end, in milliseconds.
    public var durationMs: Int64? {
        guard status == .ended, let acceptedAt, let endedAt else { return nil }
        return max(0, endedAt - acceptedAt)
    }

    /// Whether `uid` is the initiator or the receiver.
    public func isParty(_ uid: String) -> Bool { uid == initiator || uid == receiver }

    /// The other party, seen from `uid`.
    public func otherParty(of uid: String) -> String { uid == initiator ? receiver : initiator }

    /// The call's direction seen from `uid`.
    public func direction(for uid: String) -> CallDirection { uid == initiator ? .outgoing : .incoming }

    /// Whether the call counts as missed for `uid`: incoming and ended
    /// unanswered, cancelled or busy.
    public func isMissed(for uid: String) -> Bool {
        uid == receiver && (status == .unanswered || status == .cancelled || status == .busy)
    }
}

/// A call as it appears in one user's history.
public struct CallLog: Hashable, Sendable {
    public var call: Call
    /// Incoming or outgoing, for the user.
    public var direction: CallDirection
    /// Whether the user missed it.
    public var missed: Bool

    public init(call: Call, for uid: String) {
        self.call = call
        direction = call.direction(for: uid)
        missed = call.isMissed(for: uid)
    }

    /// An entry with explicit fields (as decoded).
    public init(call: Call, direction: CallDirection, missed: Bool) {
        self.call = call
        self.direction = direction
        self.missed = missed
    }
}

extension Call {
    /// The device of `uid` that is in the call (`initiatorDevice` for the
    /// caller, `acceptedBy` for the callee), when known.
    public func device(of uid: String) -> String? {
        uid == initiator ? initiatorDevice : uid == receiver ? acceptedBy : nil
    }
}
