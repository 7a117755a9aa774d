extension ClientFrame {
    /// The wire form (docs/PROTOCOL.md, "Requests and results"): `type` and
    /// `id`, then the request's parameters; what ``parse(_:)`` reads back.
    public var json: JSONValue {
        .object([("type", .string(request.type.rawValue)), ("id", .string(id))] + request.parameters)
    }

    /// The wire form as UTF-8 bytes, ready for a text frame.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        json.write(into: &bytes)
        return bytes
    }
}

extension ClientRequest {
    /// The members that follow `type` and `id`; optional ones only when set.
    var parameters: [(key: String, value: JSONValue)] {
        switch self {
        case .auth(let credentials, let deviceId, let resume):
            var members: [(key: String, value: JSONValue)]
            switch credentials {
            case .authKey(let uid, let key): members = [("uid", .string(uid)), ("authKey", .string(key))]
            case .token(let token): members = [("authToken", .string(token))]
            }
            if let deviceId { members.append(("deviceId", .string(deviceId))) }
            if let resume {
                var point: [(key: String, value: JSONValue)] = [
                    ("deviceId", .string(resume.deviceId)), ("afterSeq", .integer(resume.afterSeq)),
                ]
                if let epoch = resume.epoch { point.append(("epoch", .string(epoch))) }
                members.append(("resume", .object(point)))
            }
            return members
        case .initiateCall(let receiverId, let callType, let timeout, let metadata, let clientCallId):
            var members: [(key: String, value: JSONValue)] = [
                ("receiverId", .string(receiverId)),
                ("callType", .string(callType.rawValue)),
            ]
            if let timeout { members.append(timeout.member) }
            if let metadata { members.append(("metadata", metadata)) }
            if let clientCallId { members.append(("clientCallId", .string(clientCallId))) }
            return members
        case .acceptCall(let sessionId), .ringing(let sessionId), .cancelCall(let sessionId),
            .endCall(let sessionId), .getMediaToken(let sessionId):
            return [("sessionId", .string(sessionId))]
        case .rejectCall(let sessionId, let status, let reason):
            var members: [(key: String, value: JSONValue)] = [
                ("sessionId", .string(sessionId)), ("status", .string(status.rawValue)),
            ]
            if let reason { members.append(("reason", .string(reason))) }
            return members
        case .getActiveCall, .unregisterPushToken, .getIceServers:
            return []
        case .signal(let sessionId, let payload):
            return [("sessionId", .string(sessionId)), ("payload", payload)]
        case .getCallLogs(let filter):
            return filter.parameters
        case .registerPushToken(let registration):
            return registration.members
        case .setDoNotDisturb(let setting):
            return setting.json.objectMembers ?? []
        }
    }
}

extension CallLogFilter {
    /// The `getCallLogs` parameters (and REST query items) this filter sets.
    public var parameters: [(key: String, value: JSONValue)] {
        var members: [(key: String, value: JSONValue)] = [("limit", .integer(Int64(limit)))]
        if let cursor { members.append(("cursor", .string(cursor))) }
        if let callType { members.append(("callType", .string(callType.rawValue))) }
        if missedOnly {
            members.append(("callStatus", .string("missed")))
        } else if let status {
            members.append(("callStatus", .string(status.rawValue)))
        }
        if let direction { members.append(("direction", .string(direction.rawValue))) }
        if let with { members.append(("with", .string(with))) }
        return members
    }
}
