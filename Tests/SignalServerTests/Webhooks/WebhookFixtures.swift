import SignalProtocol

@testable import SignalServer

/// The example of the webhook tests: bob's phone accepts alice's video
/// call, the store's 42nd change. Its body and signatures were worked out
/// independently (by hand, and with Python's `hmac`), not with ringd.
enum WebhookExample {
    static let sessionId = "9f2ce0b4a1d34c6e8b7f5a2c1d0e3f4a"

    static let ringing = Call(
        sessionId: sessionId, callType: .video, status: .initiated, initiator: "alice",
        receiver: "bob", initiatorDevice: "alice-laptop", initiatedAt: 1_700_000_000_000, timeoutMs: 45_000,
        metadata: .object([("topic", .string("standup"))]), seq: 41)

    static var accepted: CallChange {
        var after = ringing
        after.status = .ongoing
        after.acceptedAt = 1_700_000_004_000
        after.acceptedBy = "bob-phone"
        after.seq = 42
        return CallChange(
            before: ringing, after: after, transition: .accept(deviceId: "bob-phone"),
            actor: .device(uid: "bob", deviceId: "bob-phone"))
    }

    static let eventId = "evt_9f2ce0b4a1d34c6e8b7f5a2c1d0e3f4a_42"

    static let body = """
        {"trigger":"call_started","id":"evt_9f2ce0b4a1d34c6e8b7f5a2c1d0e3f4a_42","createdAt":1700000004000,\
        "data":{"id":"9f2ce0b4a1d34c6e8b7f5a2c1d0e3f4a","sessionId":"9f2ce0b4a1d34c6e8b7f5a2c1d0e3f4a",\
        "type":"video","status":"ongoing","initiator":{"uid":"alice"},"receiver":{"uid":"bob"},"receiverType":"user",\
        "call":{"sessionId":"9f2ce0b4a1d34c6e8b7f5a2c1d0e3f4a","callType":"video","receiverType":"user",\
        "status":"ongoing","initiator":{"uid":"alice"},"receiver":{"uid":"bob"},"initiatorDevice":"alice-laptop",\
        "initiatedAt":1700000000000,\
        "acceptedAt":1700000004000,"endedAt":null,"durationMs":null,"acceptedBy":"bob-phone","endedBy":null,\
        "endReason":null,"timeout":45,"timeoutMs":45000,"metadata":{"topic":"standup"},"seq":42}}}
        """

    /// The secret of the Standard Webhooks libraries' own tests (24 bytes).
    static let firstSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    /// The bytes 0 to 31.
    static let secondSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

    static let timestamp: Int64 = 1_700_000_005

    /// base64 HMAC-SHA256 of "eventId.timestamp.body", for each secret.
    static let firstSignature = "v1,UsnCVVfOMdT1VKyhAr5HhQ7Sr7lUCghHHZvS757ffHI="
    static let secondSignature = "v1,LORk3VCzLlnGTkZ7OEyB00MJl2hH8x3b0xdwU0o7GzU="
    /// Hex HMAC-SHA256 of the body alone, with the first secret.
    static let cometChatSignature = "fd8be404518e967a7926654a6906dea7142d08c1c0a9a6b0ed48c0067654236d"
}
