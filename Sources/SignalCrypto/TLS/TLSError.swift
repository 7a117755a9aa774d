import COpenSSL

/// A TLS failure: a stable code for programs and a message for people, with
/// OpenSSL's own reason appended where it has one.
public struct TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable code: one of the static members (`TLS_…`).
    public let code: String
    public let message: String

    /// A certificate, key or CA file could not be read or used.
    public static let configurationCode = "TLS_CONFIGURATION"
    /// The peer's certificate did not verify (untrusted, expired, wrong name).
    public static let verificationCode = "TLS_VERIFICATION"
    /// The handshake failed for another reason (no common version or cipher,
    /// not TLS at all, an alert from the peer).
    public static let handshakeCode = "TLS_HANDSHAKE"
    /// A record could not be decrypted or the peer broke the protocol later on.
    public static let protocolCode = "TLS_PROTOCOL"

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// An error whose message ends with the reasons on OpenSSL's error queue,
    /// which it empties.
    static func fromQueue(_ code: String, _ message: String) -> TLSError {
        let reasons = drainQueue()
        return TLSError(
            code: code, message: reasons.isEmpty ? message : "\(message): \(reasons.joined(separator: "; "))")
    }

    /// Takes every entry off this thread's OpenSSL error queue, as reason texts.
    static func drainQueue() -> [String] {
        var reasons: [String] = []
        while case let error = ERR_get_error(), error != 0 {
            if let reason = ERR_reason_error_string(error) {
                let text = String(cString: reason)
                if !reasons.contains(text) { reasons.append(text) }
            } else {
                reasons.append("error \(error)")
            }
        }
        return reasons
    }

    public var description: String { "\(code): \(message)" }
}
