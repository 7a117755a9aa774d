/// A stable code of a webhook failure. Open, like ``StoreErrorCode``.
public struct WebhookErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code string, e.g. `WEBHOOK_BAD_SECRET`.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// A configured secret is not a Standard Webhooks `whsec_` secret (the
    /// message says why, never what the secret was).
    public static let badSecret = WebhookErrorCode(rawValue: "WEBHOOK_BAD_SECRET")
    /// An endpoint has no secret to sign with.
    public static let noSecret = WebhookErrorCode(rawValue: "WEBHOOK_NO_SECRET")
    /// A change that no webhook trigger describes (see ``WebhookTrigger/init(change:)``).
    public static let noTrigger = WebhookErrorCode(rawValue: "WEBHOOK_NO_TRIGGER")
    /// A change without its position in the change sequence (not committed
    /// yet), which the event id needs.
    public static let uncommittedChange = WebhookErrorCode(rawValue: "WEBHOOK_UNCOMMITTED_CHANGE")
}

/// A webhook failure: a stable code and a human-readable message.
public struct WebhookError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable code.
    public let code: WebhookErrorCode
    /// What went wrong, for people (and logs).
    public let message: String

    public init(_ code: WebhookErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
