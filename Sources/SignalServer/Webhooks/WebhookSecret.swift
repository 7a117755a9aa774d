import SignalProtocol

/// One endpoint's signing secret in the Standard Webhooks form: `whsec_`
/// and the base64 of 24 to 64 random bytes, the HMAC key. Nothing about it
/// prints: neither its description nor an error made from it holds the
/// secret or any part of it, since both end up in logs.
public struct WebhookSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The prefix Standard Webhooks gives symmetric secrets.
    public static let prefix = "whsec_"
    /// The key lengths the Standard Webhooks specification allows, in bytes.
    public static let keyLengths = 24 ... 64

    /// The HMAC-SHA256 key.
    let key: [UInt8]

    /// Parses `text`; throws ``WebhookErrorCode/badSecret`` saying what is
    /// wrong with it. The base64 may be padded or not (secrets are handed
    /// out both ways, and the Standard Webhooks libraries accept both), but
    /// must use the standard alphabet: those libraries skip other
    /// characters, and would verify with a different key.
    public init(_ text: String) throws(WebhookError) {
        guard text.hasPrefix(Self.prefix) else {
            throw WebhookError(.badSecret, "a webhook secret must start with \(Self.prefix)")
        }
        var encoded = String(text.dropFirst(Self.prefix.count))
        if encoded.utf8.count % 4 != 0, !encoded.hasSuffix("=") {
            encoded += String(repeating: "=", count: 4 - encoded.utf8.count % 4)
        }
        guard let key = Base64.decode(encoded) else {
            throw WebhookError(
                .badSecret, "a webhook secret must be \(Self.prefix) followed by base64 (A-Z a-z 0-9 + /)")
        }
        guard Self.keyLengths.contains(key.count) else {
            throw WebhookError(
                .badSecret,
                "a webhook secret must encode \(Self.keyLengths.lowerBound) to "
                    + "\(Self.keyLengths.upperBound) bytes; this one encodes \(key.count)")
        }
        self.key = key
    }

    public var description: String { "\(Self.prefix)…" }
    public var debugDescription: String { "WebhookSecret(\(Self.prefix)…)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
