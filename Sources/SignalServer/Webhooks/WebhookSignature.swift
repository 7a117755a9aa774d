import SignalCrypto
import SignalProtocol

/// Signs webhook requests for one endpoint, with every secret it has, so
/// that a receiver can rotate: it adds the new secret, then drops the old
/// one, and accepts any signature that matches one of its own.
public struct WebhookSignature: Sendable {
    /// In the configured order.
    public let secrets: [WebhookSecret]
    /// The first of them, which also makes `X-CometChat-Signature`.
    private let primary: WebhookSecret

    /// Throws ``WebhookErrorCode/noSecret`` when `secrets` is empty.
    public init(secrets: [WebhookSecret]) throws(WebhookError) {
        guard let primary = secrets.first else {
            throw WebhookError(.noSecret, "a webhook endpoint needs at least one secret")
        }
        self.secrets = secrets
        self.primary = primary
    }

    /// Parses each of `secrets` (see ``WebhookSecret/init(_:)``).
    public init(secrets: [String]) throws(WebhookError) {
        var parsed: [WebhookSecret] = []
        for secret in secrets { parsed.append(try WebhookSecret(secret)) }
        try self.init(secrets: parsed)
    }

    /// The headers of one attempt to deliver `body` as event `id`, made at
    /// `timestamp` (Unix seconds). Sign every attempt anew: receivers refuse
    /// a timestamp more than a few minutes off their clock. Throws
    /// ``CryptoError/Code/digest`` when an HMAC cannot be made.
    public func headers(id: String, timestamp: Int64, body: [UInt8]) throws(CryptoError) -> WebhookHeaders {
        var signed = Array("\(id).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        var signatures: [String] = []
        for secret in secrets {
            signatures.append("v1," + Base64.encode(try Crypto.hmacSHA256(key: secret.key, message: signed)))
        }
        return WebhookHeaders(
            id: id, timestamp: timestamp, signature: signatures.joined(separator: " "),
            cometChatSignature: Self.hex(try Crypto.hmacSHA256(key: primary.key, message: body)))
    }

    /// The headers of one attempt to deliver `event`.
    public func headers(for event: WebhookEvent, timestamp: Int64) throws(CryptoError) -> WebhookHeaders {
        try headers(id: event.id, timestamp: timestamp, body: event.body)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The signature headers of one delivery attempt.
public struct WebhookHeaders: Hashable, Sendable {
    /// `webhook-id`: the event id, the same on every attempt.
    public let id: String
    /// `webhook-timestamp`: the attempt's time, Unix seconds.
    public let timestamp: Int64
    /// `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
    /// for each secret, space-separated.
    public let signature: String
    /// `X-CometChat-Signature`: the lowercase hex HMAC-SHA256 of the body
    /// alone, with the first secret.
    public let cometChatSignature: String

    /// Name and value of each, in the order sent.
    public var fields: [(name: String, value: String)] {
        [
            ("webhook-id", id), ("webhook-timestamp", String(timestamp)), ("webhook-signature", signature),
            ("X-CometChat-Signature", cometChatSignature),
        ]
    }
}
