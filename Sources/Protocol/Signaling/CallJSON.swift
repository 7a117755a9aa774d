extension Call {
    /// The wire form of the call (see docs/PROTOCOL.md).
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("sessionId", .string(sessionId)),
            ("callType", .string(callType.rawValue)),
            ("receiverType", .string("user")),
            ("status", .string(status.rawValue)),
            ("initiator", initiatorJSON),
            ("receiver", receiverJSON),
            ("initiatorDevice", initiatorDevice.map(JSONValue.string) ?? .null),
            ("initiatedAt", .integer(initiatedAt)),
            ("acceptedAt", acceptedAt.map(JSONValue.integer) ?? .null),
            ("endedAt", endedAt.map(JSONValue.integer) ?? .null),
            ("durationMs", durationMs.map(JSONValue.integer) ?? .null),
            ("acceptedBy", acceptedBy.map(JSONValue.string) ?? .null),
            ("endedBy", endedBy.map(JSONValue.string) ?? .null),
            ("endReason", endReason.map { .string($0.rawValue) } ?? .null),
            ("timeout", .integer(Int64(timeout))),
            ("timeoutMs", .integer(timeoutMs)),
            ("metadata", metadata ?? .null),
            ("seq", .integer(seq)),
        ]
        // Only on a call declined with a reason, so every other call reads
        // as it always did.
        if let rejectReason { members.append(("rejectReason", .string(rejectReason))) }
        // Only once a callee device acknowledged the ring, for the same reason.
        if !ringingDevices.isEmpty {
            members.append(("ringingDevices", .array(ringingDevices.map(JSONValue.string))))
        }
        if silent { members.append(("silent", .bool(true))) }
        // Only on a call placed with one, for the same reason.
        if let clientCallId { members.append(("clientCallId", .string(clientCallId))) }
        return .object(members)
    }

    /// The caller as the call object shows it: `uid`, and the profile's
    /// `name` and `avatarUrl` when it had them.
    public var initiatorJSON: JSONValue { Self.party(initiator, name: initiatorName, avatarUrl: initiatorAvatarUrl) }

    /// The callee as the call object shows it (see ``initiatorJSON``).
    public var receiverJSON: JSONValue { Self.party(receiver, name: receiverName, avatarUrl: receiverAvatarUrl) }

    private static func party(_ uid: String, name: String?, avatarUrl: String?) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("uid", .string(uid))]
        if let name { members.append(("name", .string(name))) }
        if let avatarUrl { members.append(("avatarUrl", .string(avatarUrl))) }
        return .object(members)
    }

    /// Decodes the wire form; fails naming the first field that is missing or wrong.
    public init(json: JSONValue) throws(SignalError) {
        let fields = JSONFields(json)
        sessionId = try fields.string("sessionId")
        callType = try fields.enumeration("callType", CallType.self)
        status = try fields.enumeration("status", CallStatus.self)
        (initiator, initiatorName, initiatorAvatarUrl) = try Self.party(fields.nested("initiator"))
        (receiver, receiverName, receiverAvatarUrl) = try Self.party(fields.nested("receiver"))
        initiatorDevice = try fields.optionalString("initiatorDevice")
        initiatedAt = try fields.integer("initiatedAt")
        acceptedAt = try fields.optionalInteger("acceptedAt")
        endedAt = try fields.optionalInteger("endedAt")
        acceptedBy = try fields.optionalString("acceptedBy")
        endedBy = try fields.optionalString("endedBy")
        endReason = try fields.optionalEnumeration("endReason", EndReason.self)
        timeoutMs = try Self.timeoutMs(fields)
        metadata = json["metadata"].flatMap { $0 == .null ? nil : $0 }
        seq = try fields.optionalInteger("seq") ?? 0
        rejectReason = try fields.optionalString("rejectReason")
        silent = json["silent"]?.boolValue ?? false
        ringingDevices = try fields.optionalStrings("ringingDevices") ?? []
        clientCallId = try fields.optionalString("clientCallId")
    }

    /// A party's `uid`, `name` and `avatarUrl`.
    private static func party(_ fields: JSONFields) throws(SignalError) -> (String, String?, String?) {
        (try fields.string("uid"), try fields.optionalString("name"), try fields.optionalString("avatarUrl"))
    }

    /// `timeoutMs`, or from a server that sends only `timeout`, its seconds.
    private static func timeoutMs(_ fields: JSONFields) throws(SignalError) -> Int64 {
        if let milliseconds = try fields.optionalInteger("timeoutMs") { return milliseconds }
        let (milliseconds, overflow) = try fields.integer("timeout").multipliedReportingOverflow(by: 1000)
        guard !overflow else { throw SignalError(.validation, "timeout must be a number of seconds") }
        return milliseconds
    }
}

extension CallLog {
    /// The wire form: the call's fields plus `direction` and `missed`.
    public var json: JSONValue {
        guard case .object(var members) = call.json else { return call.json }
        members.append(("direction", .string(direction.rawValue)))
        members.append(("missed", .bool(missed)))
        return .object(members)
    }

    public init(json: JSONValue) throws(SignalError) {
        let fields = JSONFields(json)
        self.init(
            call: try Call(json: json),
            direction: try fields.enumeration("direction", CallDirection.self),
            missed: try fields.bool("missed"))
    }
}

/// Reads typed fields out of a JSON object, failing with ``SignalErrorCode/validation``
/// and a message that names the field.
public struct JSONFields {
    /// The object read from.
    public let value: JSONValue

    public init(_ value: JSONValue) {
        self.value = value
    }

    private func invalid(_ name: String, _ expectation: String) -> SignalError {
        SignalError(.validation, "\(name) must be \(expectation)")
    }

    /// Whether the field is present and not null.
    public func has(_ name: String) -> Bool {
        guard let field = value[name] else { return false }
        return field != .null
    }

    /// A required string.
    public func string(_ name: String) throws(SignalError) -> String {
        guard let text = value[name]?.stringValue else { throw invalid(name, "a string") }
        return text
    }

    /// An optional string (absent or null gives nil).
    public func optionalString(_ name: String) throws(SignalError) -> String? {
        guard has(name) else { return nil }
        return try string(name)
    }

    /// An optional array of strings (absent or null gives nil).
    public func optionalStrings(_ name: String) throws(SignalError) -> [String]? {
        guard has(name) else { return nil }
        guard case .array(let members)? = value[name] else { throw invalid(name, "an array of strings") }
        var strings: [String] = []
        strings.reserveCapacity(members.count)
        for member in members {
            guard let text = member.stringValue else { throw invalid(name, "an array of strings") }
            strings.append(text)
        }
        return strings
    }

    /// A required integer.
    public func integer(_ name: String) throws(SignalError) -> Int64 {
        guard let number = value[name]?.integerValue else { throw invalid(name, "an integer") }
        return number
    }

    /// An optional integer.
    public func optionalInteger(_ name: String) throws(SignalError) -> Int64? {
        guard has(name) else { return nil }
        return try integer(name)
    }

    /// A required boolean.
    public func bool(_ name: String) throws(SignalError) -> Bool {
        guard let flag = value[name]?.boolValue else { throw invalid(name, "true or false") }
        return flag
    }

    /// A required string from a fixed set.
    public func enumeration<E: RawRepresentable & CaseIterable>(_ name: String, _ type: E.Type) throws(SignalError) -> E
    where E.RawValue == String {
        let options = E.allCases.map(\.rawValue).joined(separator: ", ")
        guard let text = value[name]?.stringValue, let result = E(rawValue: text) else {
            throw invalid(name, "one of \(options)")
        }
        return result
    }

    /// An optional string from a fixed set.
    public func optionalEnumeration<E: RawRepresentable & CaseIterable>(
        _ name: String, _ type: E.Type
    ) throws(SignalError) -> E?
    where E.RawValue == String {
        guard has(name) else { return nil }
        return try enumeration(name, type)
    }

    /// A required nested object.
    public func nested(_ name: String) throws(SignalError) -> JSONFields {
        guard let object = value[name], object.objectMembers != nil else { throw invalid(name, "an object") }
        return JSONFields(object)
    }
}
