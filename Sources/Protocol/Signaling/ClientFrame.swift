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

    /// A filter; everything optional.
    public init(limit: Int = defaultLimit, cursor: String? = nil, callType: CallType? = nil, status: CallStatus? = nil,
                missedOnly: Bool = false, direction: CallDirection? = nil, with: String? = nil) {
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

/// A request a client sends; each names its parameters as in docs/PROTOCOL.md.
public enum ClientRequest: Hashable, Sendable {
    /// Authenticate the connection (first frame).
    case auth(Credentials, deviceId: String?)
    /// Ring `receiverId`.
    case initiateCall(receiverId: String, callType: CallType, timeout: Int?, metadata: JSONValue?)
    /// Accept a ringing call (receiver devices).
    case acceptCall(sessionId: String)
    /// Decline a ringing call with `rejected` or `busy`; `cancelled` from the caller cancels.
    case rejectCall(sessionId: String, status: CallStatus)
    /// Cancel one's own ringing call.
    case cancelCall(sessionId: String)
    /// End an ongoing call.
    case endCall(sessionId: String)
    /// The user's live call, if any.
    case getActiveCall
    /// A page of the user's call history.
    case getCallLogs(CallLogFilter)

    /// The frame's `type`.
    public var type: String {
        switch self {
        case .auth: return "auth"
        case .initiateCall: return "initiateCall"
        case .acceptCall: return "acceptCall"
        case .rejectCall: return "rejectCall"
        case .cancelCall: return "cancelCall"
        case .endCall: return "endCall"
        case .getActiveCall: return "getActiveCall"
        case .getCallLogs: return "getCallLogs"
        }
    }
}

/// One frame from a client: a request and the id its result will echo.
public struct ClientFrame: Hashable, Sendable {
    /// The client-chosen request id (1–64 characters).
    public var id: String
    /// The request.
    public var request: ClientRequest

    /// A frame carrying `request` under `id`.
    public init(id: String, request: ClientRequest) {
        self.id = id
        self.request = request
    }

    /// Why a frame was refused: the error, and the frame's id when it had a usable one.
    public struct ParseError: Error, Hashable, Sendable {
        /// The request id, if the frame had a valid one.
        public let id: String?
        /// What is wrong.
        public let error: SignalError

        /// A refusal of the frame with `id` (if it had a usable one).
        public init(id: String?, error: SignalError) {
            self.id = id
            self.error = error
        }
    }

    /// The largest `metadata` object accepted, serialized.
    public static let maxMetadataBytes = 4096
    /// The deepest nesting accepted inside `metadata`, so every frame that
    /// carries it back stays within ``JSONValue/maxDepth``.
    public static let maxMetadataDepth = 32

    /// Parses a text frame.
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> ClientFrame {
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            throw ParseError(id: nil, error: SignalError(.badRequest, "invalid JSON: \(error)"))
        }
        guard json.objectMembers != nil else {
            throw ParseError(id: nil, error: SignalError(.badRequest, "a frame must be a JSON object"))
        }
        guard let id = json["id"]?.stringValue, (1 ... 64).contains(id.count) else {
            throw ParseError(id: nil, error: SignalError(.badRequest, "id must be a string of 1 to 64 characters"))
        }
        guard let type = json["type"]?.stringValue else {
            throw ParseError(id: id, error: SignalError(.badRequest, "type must be a string"))
        }
        do {
            return ClientFrame(id: id, request: try parseRequest(type: type, JSONFields(json)))
        } catch {
            throw ParseError(id: id, error: error)
        }
    }

    private static func parseRequest(type: String, _ fields: JSONFields) throws(SignalError) -> ClientRequest {
        switch type {
        case "auth":
            let deviceId = try fields.optionalString("deviceId")
            if let deviceId, !Identifier.isValid(deviceId) {
                throw SignalError(.validation, "deviceId must be 1 to 100 characters of A-Z a-z 0-9 . _ - @")
            }
            if fields.has("authToken") {
                return .auth(.token(try fields.string("authToken")), deviceId: deviceId)
            }
            return .auth(.authKey(uid: try fields.string("uid"), key: try fields.string("authKey")), deviceId: deviceId)
        case "initiateCall":
            let receiver = try fields.string("receiverId")
            guard Identifier.isValid(receiver) else {
                throw SignalError(.validation, "receiverId must be 1 to 100 characters of A-Z a-z 0-9 . _ - @")
            }
            let timeout = try fields.optionalInteger("timeout")
            if let timeout, !(1 ... 300).contains(timeout) {
                throw SignalError(.validation, "timeout must be an integer from 1 to 300 seconds")
            }
            let metadata = try metadata(fields)
            return .initiateCall(receiverId: receiver, callType: try fields.enumeration("callType", CallType.self),
                                 timeout: timeout.map { Int($0) }, metadata: metadata)
        case "acceptCall":
            return .acceptCall(sessionId: try fields.string("sessionId"))
        case "rejectCall":
            let status = try fields.optionalString("status") ?? "rejected"
            guard let parsed = CallStatus(rawValue: status), [.rejected, .busy, .cancelled].contains(parsed) else {
                throw SignalError(.validation, "status must be one of rejected, busy, cancelled")
            }
            return .rejectCall(sessionId: try fields.string("sessionId"), status: parsed)
        case "cancelCall":
            return .cancelCall(sessionId: try fields.string("sessionId"))
        case "endCall":
            return .endCall(sessionId: try fields.string("sessionId"))
        case "getActiveCall":
            return .getActiveCall
        case "getCallLogs":
            return .getCallLogs(try callLogFilter(fields))
        default:
            throw SignalError(.unknownType, "unknown frame type \"\(type)\"")
        }
    }

    private static func metadata(_ fields: JSONFields) throws(SignalError) -> JSONValue? {
        guard fields.has("metadata") else { return nil }
        let value = try fields.nested("metadata").value
        var encoded: [UInt8] = []
        value.write(into: &encoded)
        guard encoded.count <= maxMetadataBytes else {
            throw SignalError(.validation, "metadata must be at most \(maxMetadataBytes) bytes of JSON")
        }
        guard value.depth <= maxMetadataDepth else {
            throw SignalError(.validation, "metadata must be nested at most \(maxMetadataDepth) levels deep")
        }
        return value
    }

    /// Parses `getCallLogs` parameters (shared with the REST API's query string).
    public static func callLogFilter(_ fields: JSONFields) throws(SignalError) -> CallLogFilter {
        var filter = CallLogFilter()
        if let limit = try fields.optionalInteger("limit") {
            guard CallLogFilter.limitRange.contains(Int(limit)) else {
                throw SignalError(.validation, "limit must be from 1 to 100")
            }
            filter.limit = Int(limit)
        }
        filter.cursor = try fields.optionalString("cursor")
        filter.callType = try fields.optionalEnumeration("callType", CallType.self)
        if let status = try fields.optionalString("callStatus") {
            if status == "missed" {
                filter.missedOnly = true
            } else if let parsed = CallStatus(rawValue: status) {
                filter.status = parsed
            } else {
                let options = CallStatus.allCases.map(\.rawValue).joined(separator: ", ")
                throw SignalError(.validation, "callStatus must be one of \(options), missed")
            }
        }
        filter.direction = try fields.optionalEnumeration("direction", CallDirection.self)
        if let with = try fields.optionalString("with") {
            guard Identifier.isValid(with) else { throw SignalError(.validation, "with must be a valid uid") }
            filter.with = with
        }
        return filter
    }
}

/// The rule for uids and device ids: 1–100 characters of `A-Z a-z 0-9 . _ - @`.
public enum Identifier {
    /// Whether `text` is a valid uid or device id.
    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1 ... 100).contains(bytes.count) && bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "-"), UInt8(ascii: "@"):
                return true
            default:
                return false
            }
        }
    }
}
