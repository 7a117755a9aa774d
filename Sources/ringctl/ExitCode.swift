#if canImport(Glibc)
    import Glibc
#endif

/// The exit statuses of ringctl, as `ringctl --help` documents them.
enum ExitCode: Int32, Sendable {
    /// The call connected and ended normally; any other command succeeded.
    case success = 0
    /// A server or network error: ringd unreachable, credentials refused, a
    /// request failed, or a call ended by connection loss or server shutdown.
    case failure = 1
    /// The command line was wrong.
    case usage = 2
    /// The callee rejected the call.
    case rejected = 3
    /// The callee was busy.
    case busy = 4
    /// Nobody answered before the ring timeout.
    case unanswered = 5
    /// The caller cancelled the call.
    case cancelled = 6
    /// A stop signal came a second time: ringctl quit without waiting for ringd.
    case interrupted = 130
}

/// Leaves ringctl with `code`, restoring the terminal first. Output needs no
/// flushing: ``Console`` writes every line unbuffered.
func terminate(_ code: ExitCode) -> Never {
    Terminal.restore()
    exit(code.rawValue)
}
