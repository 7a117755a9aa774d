/// A configuration problem found at start-up; the daemon reports it and exits.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the key or file.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
