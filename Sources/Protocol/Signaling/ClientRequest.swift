/// Which calls `getCallLogs` returns, and which page.
public struct CallLogFilter: Hashable, Sendable {
    /// Page size, 1–100.
    public var limit: Int
    /// Where the previous page ended (opaque, from `next`).
    public var cursor: String?
    /// Only audio or only video calls.
    public var callType: CallType?
    /// Only calls with this status.
    public var status: CallStatus?
    /// Only missed calls (`callStatus: "missed"`).
    public var missedOnly: Bool
    /// Only incoming or only outgoing calls.
    public var direction: CallDirection?
    /// Only calls with this other party.
    public var with: String?

    /// The default page size.
    public static let defaultLimit = 30
    /// The page sizes accepted.
    public static let limitRange = 1 ... 100

    public init(
        limit: Int = defaultLimit, cursor: String? = nil, callType: CallType? = nil, status: CallStatus? = nil,
        missedOnly: Bool = false, direction: CallDirection? = nil, with: String? = nil
    ) {
        self.limit = limit
        self.cursor = cursor
        self.callType = callType
        self.status = status
        self.missedOnly = missedOnly
        self.direction = direction
        self.with = with
    }
}

/// Credentials of an `auth` frame.
public enum Credentials: Hashable, Sendable {
    /// A uid and a development auth key (`auth.authKeys`).
    case authKey(uid: String, key: String)
    /// A server-minted token.
    case token(String)
}

/// Where a reconnecting device left off (`auth`'s `resume`): the largest
/// `seq` it has seen, and the store epoch of the connection it heard it on
/// (nil from a client that does not know epochs: then the position is taken
/// as the store's own).
public struct ResumePoint: Hashable, Sendable {
    public var deviceId: String
    public var afterSeq: Int64
    public var epoch: String?

    public init(deviceId: String, afterSeq: Int64, epoch: String? = nil) {
        self.deviceId = deviceId
        self.afterSeq = afterSeq
        self.epoch = epoch
    }
}

/// A request a client sends; each names its parameters as in docs/PROTOCOL.md.
public enum ClientRequest: Hashable, Sendable {
    /// Authenticate the connection (first frame); with `resume`, also hear
    /// what changed since the device last heard (`deviceId` is then the
    /// resuming device's).
    case auth(Credentials, deviceId: String?, resume: ResumePoint? = nil)
    /// Ring `receiverId` (for `timeout`, or the server's default when nil);
    /// a repeat with the same `clientCallId` answers the call it placed.
    case initiateCall(
        receiverId: String, callType: CallType, timeout: RingTimeout?, metadata: JSONValue?,
        clientCallId: String? = nil)
    /// Accept a ringing call (receiver devices).
    case acceptCall(sessionId: String)
    /// Say this receiver device shows the ringing call (it reached CallKit,
    /// or rendered the ring): the caller's devices can show "ringing".
    case ringing(sessionId: String)
    /// Decline a ringing call with `rejected` or `busy`, saying `reason` if
    /// given; `cancelled` from the caller cancels.
    case rejectCall(sessionId: String, status: CallStatus, reason: String? = nil)
    /// Cancel one's own ringing call.
    case cancelCall(sessionId: String)
    /// End an ongoing call.
    case endCall(sessionId: String)
    /// The user's live call, if any.
    case getActiveCall
    /// A page of the user's call history.
    case getCallLogs(CallLogFilter)
    /// Set this device's push token, so that it rings while not connected.
    case registerPushToken(PushRegistration)
    /// Remove this device's push token.
    case unregisterPushToken
    /// Relay `payload` (a JSON object, e.g. an SDP offer) to the other
    /// party's device in the ongoing call.
    case signal(sessionId: String, payload: JSONValue)
    /// The STUN and TURN servers (with fresh TURN credentials) for WebRTC.
    case getIceServers
    /// A token that joins the media room of an ongoing call the user is a
    /// party of (``MediaToken``).
    case getMediaToken(sessionId: String)
    /// Set the user's do-not-disturb (for every device of the user).
    case setDoNotDisturb(DoNotDisturb)

    /// The frame's `type`.
    public var type: RequestType {
        switch self {
        case .auth: return .auth
        case .initiateCall: return .initiateCall
        case .acceptCall: return .acceptCall
        case .ringing: return .ringing
        case .rejectCall: return .rejectCall
        case .cancelCall: return .cancelCall
        case .endCall: return .endCall
        case .getActiveCall: return .getActiveCall
        case .getCallLogs: return .getCallLogs
        case .registerPushToken: return .registerPushToken
        case .unregisterPushToken: return .unregisterPushToken
        case .signal: return .signal
        case .getIceServers: return .getIceServers
        case .getMediaToken: return .getMediaToken
        case .setDoNotDisturb: return .setDoNotDisturb
        }
    }
}

/// The `type` of a client frame; it also says how its result's `data` reads
/// (see ``ResultData``).
public enum RequestType: String, Hashable, Sendable, CaseIterable {
    case auth, initiateCall, acceptCall, ringing, rejectCall, cancelCall, endCall, getActiveCall, getCallLogs
    case registerPushToken, unregisterPushToken, signal, getIceServers, getMediaToken, setDoNotDisturb
}
