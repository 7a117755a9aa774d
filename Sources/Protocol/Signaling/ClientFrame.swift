/// One frame from a client: a request and the id its result will echo.
public struct ClientFrame: Hashable, Sendable {
    /// The client-chosen request id (``idBytes``, UTF-8).
    public var id: String
    public var request: ClientRequest

    public init(id: String, request: ClientRequest) {
        self.id = id
        self.request = request
    }

    /// Why a frame was refused: the error, and the frame's id when it had a usable one.
    public struct ParseError: Error, Hashable, Sendable {
        /// The request id, if the frame had a valid one.
        public let id: String?
        public let error: SignalError

        /// A refusal of the frame with `id` (if it had a usable one).
        public init(id: String?, error: SignalError) {
            self.id = id
            self.error = error
        }
    }

    /// How long a request id may be, in UTF-8 bytes. Bytes, not characters:
    /// a grapheme cluster has no size bound (one letter and 20,000 combining
    /// marks are one `Character`), and the id is echoed in every result.
    public static let idBytes = 1 ... 64
    /// The largest `metadata` object accepted, serialized.
    public static let maxMetadataBytes = 4096
    /// The deepest nesting accepted inside `metadata`, so every frame that
    /// carries it back stays within ``JSONValue/maxDepth``.
    public static let maxMetadataDepth = 32
    /// The largest `signal` payload accepted, serialized: an SDP offer with
    /// many candidates fits.
    public static let maxSignalPayloadBytes = 16 * 1024
    /// The longest `resume.epoch` taken, in bytes (the server's are far shorter).
    public static let maxEpochBytes = 128

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
        guard let id = json["id"]?.stringValue, idBytes.contains(id.utf8.count) else {
            throw ParseError(
                id: nil,
                error: SignalError(
                    .badRequest,
                    "id must be a string of \(idBytes.lowerBound) to \(idBytes.upperBound) bytes of UTF-8"))
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

    private static func parseRequest(type name: String, _ fields: JSONFields) throws(SignalError) -> ClientRequest {
        guard let type = RequestType(rawValue: name) else {
            throw SignalError(.unknownType, "unknown frame type \"\(name)\"")
        }
        switch type {
        case .auth:
            var deviceId = try fields.optionalString("deviceId")
            if let deviceId, !Identifier.isValid(deviceId) {
                throw SignalError(.validation, "deviceId must be \(Identifier.rule)")
            }
            let resume = try resumePoint(fields)
            if let resume {
                guard deviceId == nil || deviceId == resume.deviceId else {
                    throw SignalError(.validation, "resume.deviceId must be the deviceId of the frame")
                }
                deviceId = resume.deviceId
            }
            if fields.has("authToken") {
                return .auth(.token(try fields.string("authToken")), deviceId: deviceId, resume: resume)
            }
            return .auth(
                .authKey(uid: try fields.string("uid"), key: try fields.string("authKey")), deviceId: deviceId,
                resume: resume)
        case .initiateCall:
            let receiver = try fields.string("receiverId")
            guard Identifier.isValid(receiver) else {
                throw SignalError(.validation, "receiverId must be \(Identifier.rule)")
            }
            let timeout = try RingTimeout.parse(fields)
            let metadata = try metadata(fields)
            let clientCallId = try fields.optionalString("clientCallId")
            if let clientCallId, !Call.isValidClientCallId(clientCallId) {
                throw SignalError(.validation, "clientCallId must be \(Call.clientCallIdRule)")
            }
            return .initiateCall(
                receiverId: receiver, callType: try fields.enumeration("callType", CallType.self),
                timeout: timeout, metadata: metadata, clientCallId: clientCallId)
        case .acceptCall:
            return .acceptCall(sessionId: try fields.string("sessionId"))
        case .ringing:
            return .ringing(sessionId: try fields.string("sessionId"))
        case .rejectCall:
            let status = try fields.optionalString("status") ?? "rejected"
            guard let parsed = CallStatus(rawValue: status), [.rejected, .busy, .cancelled].contains(parsed) else {
                throw SignalError(.validation, "status must be one of rejected, busy, cancelled")
            }
            let reason = try fields.optionalString("reason")
            if let reason, reason.isEmpty || reason.count > Call.maxRejectReasonLength {
                throw SignalError(.validation, "reason must be 1 to \(Call.maxRejectReasonLength) characters")
            }
            return .rejectCall(sessionId: try fields.string("sessionId"), status: parsed, reason: reason)
        case .cancelCall:
            return .cancelCall(sessionId: try fields.string("sessionId"))
        case .endCall:
            return .endCall(sessionId: try fields.string("sessionId"))
        case .getActiveCall:
            return .getActiveCall
        case .getCallLogs:
            return .getCallLogs(try callLogFilter(fields))
        case .registerPushToken:
            return .registerPushToken(try PushRegistration(fields: fields))
        case .unregisterPushToken:
            return .unregisterPushToken
        case .signal:
            return .signal(
                sessionId: try fields.string("sessionId"),
                payload: try object(fields, "payload", maxBytes: maxSignalPayloadBytes))
        case .getIceServers:
            return .getIceServers
        case .getMediaToken:
            return .getMediaToken(sessionId: try fields.string("sessionId"))
        case .setDoNotDisturb:
            return .setDoNotDisturb(try DoNotDisturb(fields: fields))
        }
    }

    /// `auth`'s optional `resume`: `{"deviceId", "afterSeq", "epoch"}`, a
    /// valid device id, a sequence position of 0 or more and, optionally,
    /// the store epoch the position is of.
    private static func resumePoint(_ fields: JSONFields) throws(SignalError) -> ResumePoint? {
        guard fields.has("resume") else { return nil }
        let resume = try fields.nested("resume")
        let deviceId = try resume.string("deviceId")
        guard Identifier.isValid(deviceId) else {
            throw SignalError(.validation, "resume.deviceId must be \(Identifier.rule)")
        }
        let afterSeq = try resume.integer("afterSeq")
        guard afterSeq >= 0 else { throw SignalError(.validation, "resume.afterSeq must be an integer of 0 or more") }
        guard resume.has("epoch") else { return ResumePoint(deviceId: deviceId, afterSeq: afterSeq) }
        let epoch = try resume.string("epoch")
        guard !epoch.isEmpty, epoch.utf8.count <= maxEpochBytes else {
            throw SignalError(.validation, "resume.epoch must be a string of 1 to \(maxEpochBytes) bytes")
        }
        return ResumePoint(deviceId: deviceId, afterSeq: afterSeq, epoch: epoch)
    }

    private static func metadata(_ fields: JSONFields) throws(SignalError) -> JSONValue? {
        guard fields.has("metadata") else { return nil }
        return try object(fields, "metadata", maxBytes: maxMetadataBytes)
    }

    /// The object `name`, at most `maxBytes` of JSON and ``maxMetadataDepth``
    /// deep, so that every frame carrying it stays within ``JSONValue/maxDepth``.
    static func object(_ fields: JSONFields, _ name: String, maxBytes: Int) throws(SignalError) -> JSONValue {
        let value = try fields.nested(name).value
        var encoded: [UInt8] = []
        value.write(into: &encoded)
        guard encoded.count <= maxBytes else {
            throw SignalError(.validation, "\(name) must be at most \(maxBytes) bytes of JSON")
        }
        guard value.depth <= maxMetadataDepth else {
            throw SignalError(.validation, "\(name) must be nested at most \(maxMetadataDepth) levels deep")
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
