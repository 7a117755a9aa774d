/// A key or signature failure outside TLS: a stable code for programs and a
/// message for people, with OpenSSL's own reason appended where it has one.
///
/// Not a `TLSError`: a push provider whose APNs key is unusable should not
/// report it as a TLS configuration problem. The OpenSSL error queue is read
/// the same way, though, so both kinds of message look alike.
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// A key could not be read, or is of a kind or size not accepted.
        case key = "CRYPTO_KEY"
        /// Signing failed, or what was to be signed cannot be (a JWT whose
        /// claims are not an object).
        case sign = "CRYPTO_SIGN"
        /// A fresh key could not be generated or encoded.
        case generate = "CRYPTO_GENERATE"
        /// A digest or HMAC could not be computed (OpenSSL could not allocate).
        case digest = "CRYPTO_DIGEST"
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// An error whose message ends with the reasons on this thread's OpenSSL
    /// error queue, which it empties so that they are not blamed on a later call.
    static func fromQueue(_ code: Code, _ message: String) -> CryptoError {
        let reasons = TLSError.drainQueue()
        return CryptoError(
            code: code, message: reasons.isEmpty ? message : "\(message): \(reasons.joined(separator: "; "))")
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
