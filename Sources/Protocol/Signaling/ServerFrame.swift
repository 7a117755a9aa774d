/// A frame the server sends: a request's result, or a call event.
public enum ServerFrame: Hashable, Sendable {
    /// The result of the request with `id` (nil for results no request asked
    /// for: header authentication, auth timeout, unparseable frames).
    case result(id: String?, Result<JSONValue, SignalError>)
    /// A call changed.
    case call(Call)
    /// The other party's device in an ongoing call relayed this.
    case signal(PeerSignal)

    /// The wire form.
    public var json: JSONValue {
        switch self {
        case .result(let id, .success(let data)):
            return .object([
                ("type", .string("result")), ("id", id.map(JSONValue.string) ?? .null),
                ("ok", .bool(true)), ("data", data),
            ])
        case .result(let id, .failure(let error)):
            return .object([
                ("type", .string("result")), ("id", id.map(JSONValue.string) ?? .null),
                ("ok", .bool(false)),
                (
                    "error",
                    .object(
                        [("code", .string(error.code.rawValue)), ("message", .string(error.message))]
                            + (error.retryAfterMs.map { [("retryAfterMs", .integer($0))] } ?? []))
                ),
            ])
        case .call(let call):
            return .object([("type", .string("call")), ("call", call.json)])
        case .signal(let signal):
            return .object([
                ("type", .string("signal")), ("sessionId", .string(signal.sessionId)),
                ("from", .object([("uid", .string(signal.uid)), ("deviceId", .string(signal.deviceId))])),
                ("payload", signal.payload),
            ])
        }
    }

    /// The wire form as UTF-8 bytes.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        json.write(into: &bytes)
        return bytes
    }

    /// Parses a text frame from the server (client side).
    public static func parse(_ bytes: [UInt8]) throws(SignalError) -> ServerFrame {
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            throw SignalError(.badRequest, "invalid JSON: \(error)")
        }
        return try ServerFrame(json: json)
    }

    /// Decodes a frame (client side).
    public init(json: JSONValue) throws(SignalError) {
        let fields = JSONFields(json)
        switch try fields.string("type") {
        case "call":
            self = .call(try Call(json: try fields.nested("call").value))
        case "signal":
            let from = try fields.nested("from")
            self = .signal(
                PeerSignal(
                    sessionId: try fields.string("sessionId"), uid: try from.string("uid"),
                    deviceId: try from.string("deviceId"), payload: try fields.nested("payload").value))
        case "result":
            let id = try fields.optionalString("id")
            if try fields.bool("ok") {
                self = .result(id: id, .success(json["data"] ?? .null))
            } else {
                let error = try fields.nested("error")
                self = .result(
                    id: id,
                    .failure(
                        SignalError(
                            SignalErrorCode(rawValue: try error.string("code")),
                            try error.string("message"), retryAfterMs: try error.optionalInteger("retryAfterMs"))))
            }
        case let other:
            throw SignalError(.unknownType, "unknown frame type \"\(other)\"")
        }
    }
}

/// What one device of a call relayed to the other (`signal`): not stored,
/// not seen by the users' other devices.
public struct PeerSignal: Hashable, Sendable {
    public var sessionId: String
    /// The sender's uid.
    public var uid: String
    /// The sender's device.
    public var deviceId: String
    /// The JSON object the sender gave, as it gave it.
    public var payload: JSONValue

    public init(sessionId: String, uid: String, deviceId: String, payload: JSONValue) {
        self.sessionId = sessionId
        self.uid = uid
        self.deviceId = deviceId
        self.payload = payload
    }
}
