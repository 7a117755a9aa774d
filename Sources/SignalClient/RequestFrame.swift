import SignalProtocol

/// Builds the JSON of the requests a client sends (docs/PROTOCOL.md, "Requests and results").
enum RequestFrame {
    /// `{"type":"auth",…}` with a dev key or a token, and the device id when given.
    static func auth(id: String, credentials: ClientCredentials, deviceId: String?) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("type", .string("auth")), ("id", .string(id))]
        switch credentials {
        case .authKey(let uid, let key):
            members.append(("uid", .string(uid)))
            members.append(("authKey", .string(key)))
        case .token(let token):
            members.append(("authToken", .string(token)))
        }
        if let deviceId { members.append(("deviceId", .string(deviceId))) }
        return .object(members)
    }

    /// A request of `type` with id `id` and `parameters` beside them.
    static func request(_ type: String, id: String, _ parameters: [(key: String, value: JSONValue)] = []) -> JSONValue {
        .object([("type", .string(type)), ("id", .string(id))] + parameters)
    }

    /// The parameters of `initiateCall`.
    static func initiateCall(receiverId: String, type: CallType, timeout: Int?,
                             metadata: JSONValue?) -> [(key: String, value: JSONValue)] {
        var parameters: [(key: String, value: JSONValue)] = [("receiverId", .string(receiverId)),
                                                            ("callType", .string(type.rawValue))]
        if let timeout { parameters.append(("timeout", .integer(Int64(timeout)))) }
        if let metadata { parameters.append(("metadata", metadata)) }
        return parameters
    }

    /// The parameters of `getCallLogs`.
    static func callLogs(_ filter: CallLogFilter) -> [(key: String, value: JSONValue)] {
        var parameters: [(key: String, value: JSONValue)] = [("limit", .integer(Int64(filter.limit)))]
        if let cursor = filter.cursor { parameters.append(("cursor", .string(cursor))) }
        if let callType = filter.callType { parameters.append(("callType", .string(callType.rawValue))) }
        if filter.missedOnly {
            parameters.append(("callStatus", .string("missed")))
        } else if let status = filter.status {
            parameters.append(("callStatus", .string(status.rawValue)))
        }
        if let direction = filter.direction { parameters.append(("direction", .string(direction.rawValue))) }
        if let with = filter.with { parameters.append(("with", .string(with))) }
        return parameters
    }
}

/// Decodes the `data` of successful results; a shape the protocol does not
/// allow throws ``ClientErrorCode/protocolViolation``.
enum ResultDecoding {
    /// `{"user":{"uid"},"deviceId","activeCall"}`.
    static func auth(_ data: JSONValue) throws(ClientError) -> AuthResult {
        guard let uid = data["user"]?["uid"]?.stringValue, let deviceId = data["deviceId"]?.stringValue else {
            throw .protocolViolation("the auth result lacks user.uid or deviceId")
        }
        return AuthResult(uid: uid, deviceId: deviceId, activeCall: try optionalCall(data["activeCall"], "activeCall"))
    }

    /// `{"call":Call}`.
    static func call(_ data: JSONValue) throws(ClientError) -> Call {
        guard let call = try optionalCall(data["call"], "call") else {
            throw .protocolViolation("the result lacks its call")
        }
        return call
    }

    /// `{"call":Call,"ringing":N}`.
    static func initiated(_ data: JSONValue) throws(ClientError) -> (call: Call, ringing: Int) {
        guard let ringing = data["ringing"]?.integerValue else {
            throw .protocolViolation("the initiateCall result lacks ringing")
        }
        return (try call(data), Int(ringing))
    }

    /// `{"call":Call or null}`.
    static func activeCall(_ data: JSONValue) throws(ClientError) -> Call? {
        try optionalCall(data["call"], "call")
    }

    /// `{"logs":[CallLog],"next":cursor or null}`.
    static func callLogs(_ data: JSONValue) throws(ClientError) -> (logs: [CallLog], next: String?) {
        guard case .array(let entries) = data["logs"] else {
            throw .protocolViolation("the getCallLogs result lacks logs")
        }
        var logs: [CallLog] = []
        logs.reserveCapacity(entries.count)
        for entry in entries {
            do {
                logs.append(try CallLog(json: entry))
            } catch {
                throw .protocolViolation("a call log entry is malformed: \(error.message)")
            }
        }
        switch data["next"] {
        case nil, .null?: return (logs, nil)
        case .string(let next)?: return (logs, next)
        default: throw .protocolViolation("next must be a string or null")
        }
    }

    private static func optionalCall(_ value: JSONValue?, _ name: String) throws(ClientError) -> Call? {
        guard let value, value != .null else { return nil }
        do {
            return try Call(json: value)
        } catch {
            throw .protocolViolation("\(name) is malformed: \(error.message)")
        }
    }
}
