import SignalProtocol

/// One webhook event: a change of a call, as the JSON body every endpoint
/// receives (docs/WEBHOOKS.md). The body is serialized once, here; what is
/// signed and sent, on every attempt, is these bytes.
public struct WebhookEvent: Hashable, Sendable {
    /// `evt_<sessionId>_<seq>`: the same for every attempt (the
    /// `webhook-id` header), and unique: `seq` is never handed out twice by
    /// one store, and the session id (128 random bits) tells stores apart, so
    /// a receiver that keeps ids across a wiped data directory still never
    /// sees one twice. Derived from the change alone, so whoever builds the
    /// event again from the same change gets the same id.
    public let id: String
    public let trigger: WebhookTrigger
    /// The call's session id.
    public let sessionId: String
    /// The change's position in the store-wide change sequence (``Call/seq``).
    public let seq: Int64
    /// When the change happened, in milliseconds since the Unix epoch: the
    /// call's `endedAt`, else `acceptedAt`, else `initiatedAt`.
    public let createdAt: Int64
    /// The JSON body, compact, members in the documented order.
    public let body: [UInt8]

    /// The event of a committed change. Throws ``WebhookErrorCode/uncommittedChange``
    /// when the change has no position yet (`seq` 0), and
    /// ``WebhookErrorCode/noTrigger`` when no trigger describes it.
    public init(change: CallChange) throws(WebhookError) {
        let call = change.after
        guard call.seq > 0 else {
            throw WebhookError(.uncommittedChange, "call \(call.sessionId): the change has no seq yet")
        }
        guard let trigger = WebhookTrigger(change: change) else {
            throw WebhookError(
                .noTrigger,
                "call \(call.sessionId): no trigger for \(change.before?.status.rawValue ?? "nothing") → \(call.status.rawValue)"
            )
        }
        self.trigger = trigger
        sessionId = call.sessionId
        seq = call.seq
        id = "evt_\(call.sessionId)_\(call.seq)"
        createdAt = call.endedAt ?? call.acceptedAt ?? call.initiatedAt
        var body: [UInt8] = []
        body.reserveCapacity(1024)
        Self.payload(id: id, trigger: trigger, createdAt: createdAt, call: call).write(into: &body)
        self.body = body
    }

    /// CometChat's shape (`trigger`, then `data` with the call's id, type,
    /// status and parties as their handlers read them), plus the event's id
    /// and time, and ringd's whole call as on the WebSocket in `data.call`.
    private static func payload(id: String, trigger: WebhookTrigger, createdAt: Int64, call: Call) -> JSONValue {
        .object([
            ("trigger", .string(trigger.rawValue)),
            ("id", .string(id)),
            ("createdAt", .integer(createdAt)),
            (
                "data",
                .object([
                    ("id", .string(call.sessionId)),
                    ("sessionId", .string(call.sessionId)),
                    ("type", .string(call.callType.rawValue)),
                    ("status", .string(call.status.rawValue)),
                    ("initiator", call.initiatorJSON),
                    ("receiver", call.receiverJSON),
                    ("receiverType", .string("user")),
                    ("call", call.json),
                ])
            ),
        ])
    }
}
