/// A stable error code of the ringing protocol. Open: a client can carry a
/// code it does not know by name.
public struct SignalErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code string, e.g. `ERR_CALL_BUSY_SELF`.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// The frame is not valid JSON, or not an object with the fields a frame needs.
    public static let badRequest = SignalErrorCode(rawValue: "ERR_BAD_REQUEST")
    /// The frame's `type` is not one the server knows.
    public static let unknownType = SignalErrorCode(rawValue: "ERR_UNKNOWN_TYPE")
    /// A parameter is missing or invalid; the message names it.
    public static let validation = SignalErrorCode(rawValue: "ERR_VALIDATION")
    /// A request came before authentication.
    public static let authRequired = SignalErrorCode(rawValue: "ERR_AUTH_REQUIRED")
    /// The credentials were wrong, expired or revoked.
    public static let authFailed = SignalErrorCode(rawValue: "ERR_AUTH_FAILED")
    /// No auth frame arrived in time.
    public static let authTimeout = SignalErrorCode(rawValue: "ERR_AUTH_TIMEOUT")
    /// The connection is already authenticated.
    public static let alreadyAuthenticated = SignalErrorCode(rawValue: "ERR_ALREADY_AUTHENTICATED")
    /// The user has as many devices connected as allowed.
    public static let tooManyDevices = SignalErrorCode(rawValue: "ERR_TOO_MANY_DEVICES")
    /// Too many requests on this connection; slow down (the connection stays open).
    public static let rateLimited = SignalErrorCode(rawValue: "ERR_RATE_LIMITED")
    /// The caller tried to call themselves.
    public static let callingSelf = SignalErrorCode(rawValue: "ERR_CALLING_SELF")
    /// The caller is already a party of a live call.
    public static let callBusySelf = SignalErrorCode(rawValue: "ERR_CALL_BUSY_SELF")
    /// No call has this session id.
    public static let sessionNotFound = SignalErrorCode(rawValue: "ERR_CALL_SESSION_NOT_FOUND")
    /// The user is not a party of the call.
    public static let notAParty = SignalErrorCode(rawValue: "ERR_CALL_NOT_A_PART")
    /// Only the receiver may do this.
    public static let notReceiver = SignalErrorCode(rawValue: "ERR_CALL_NOT_RECEIVER")
    /// Only the initiator may do this.
    public static let notInitiator = SignalErrorCode(rawValue: "ERR_CALL_NOT_INITIATOR")
    /// The call was already accepted (by this or another device).
    public static let alreadyJoined = SignalErrorCode(rawValue: "ERR_CALL_USER_ALREADY_JOINED")
    /// The call still rings: cancel or reject it instead of ending it.
    public static let notStarted = SignalErrorCode(rawValue: "ERR_CALL_NOT_STARTED")
    /// The call is ongoing: end it instead of cancelling or rejecting it.
    public static let callOngoing = SignalErrorCode(rawValue: "ERR_CALL_ONGOING")
    /// The user is a party of the call, but the call is on another of the
    /// user's devices (the one that placed or accepted it).
    public static let otherDevice = SignalErrorCode(rawValue: "ERR_CALL_OTHER_DEVICE")
    /// The call already reached a terminal status.
    public static let terminated = SignalErrorCode(rawValue: "ERR_CALL_TERMINATED")
    /// The server has no media server configured (`getMediaToken`).
    public static let mediaNotConfigured = SignalErrorCode(rawValue: "ERR_MEDIA_NOT_CONFIGURED")
    /// The server is shutting down.
    public static let unavailable = SignalErrorCode(rawValue: "ERR_UNAVAILABLE")
    /// The server failed (e.g. the store); the request had no effect.
    public static let internalError = SignalErrorCode(rawValue: "ERR_INTERNAL")
}

/// An error result: a stable code and a human-readable message.
public struct SignalError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable code.
    public let code: SignalErrorCode
    /// What went wrong, for people.
    public let message: String
    /// For ``SignalErrorCode/rateLimited``: how long to wait (ms) before the
    /// next request would be taken; nil for other errors.
    public let retryAfterMs: Int64?

    public init(_ code: SignalErrorCode, _ message: String, retryAfterMs: Int64? = nil) {
        self.code = code
        self.message = message
        self.retryAfterMs = retryAfterMs
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
