import SignalClient

/// Why a command stops with an error: a stable code and message (for
/// `--json`), the one line ringctl prints on stderr, and the exit status.
struct Failure: Error, Sendable {
    /// The server's `ERR_…` code, a client `CLIENT_…` code, or `USAGE`.
    let code: String
    /// What went wrong.
    let message: String
    /// The line printed on stderr after `ringctl: `.
    let line: String
    /// The exit status it leads to.
    let exitCode: ExitCode

    /// A failure with every part given.
    init(code: String, message: String, line: String? = nil, exitCode: ExitCode = .failure) {
        self.code = code
        self.message = message
        self.line = line ?? "\(code): \(message)"
        self.exitCode = exitCode
    }

    /// A failure reported by the client library, talking to ringd at `server`
    /// (comma-separated when several).
    init(_ error: ClientError, server: String) {
        let line: String? =
            switch (error.code, error.httpStatus) {
            // Of several servers, only the last failed to connect: the message
            // holds why each of the others failed, which may be something else.
            case (.connectFailed, _) where server.contains(","):
                "cannot reach ringd at \(server) — is it running? (make run) — \(error.message)"
            case (.connectFailed, _): "cannot reach ringd at \(server) — is it running? (make run)"
            case (.http, let status?): "HTTP \(status) from ringd: \(error.message)"
            case (.tlsFailed, _) where error.message.contains("did not verify"):
                "\(error.message) — trust its CA with --ca-file PATH (make cert writes data/tls-cert.pem)"
            default: nil
            }
        self.init(code: error.code.rawValue, message: error.message, line: line)
    }

    /// A wrong command line; the line points at the help of `command`.
    static func usage(_ message: String, command: Subcommand?) -> Failure {
        let help = command.map { "ringctl \($0.rawValue) --help" } ?? "ringctl --help"
        return Failure(code: "USAGE", message: message, line: "\(message) (see \(help))", exitCode: .usage)
    }
}
