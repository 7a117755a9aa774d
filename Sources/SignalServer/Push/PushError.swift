/// Why push could not start or could not authenticate, with a stable code.
public struct PushError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// A `push.*` setting or a file it names is unusable.
        case configuration = "PUSH_CONFIGURATION"
        /// Signing a JWT or getting an access token failed.
        case credentials = "PUSH_CREDENTIALS"
    }

    public let code: Code
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
