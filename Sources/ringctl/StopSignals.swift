import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP never kill ringctl abruptly: they are blocked in
/// every thread and taken by `sigwait` on the main thread. The first goes to the
/// handler a call or answer session installed (which then cancels or ends its
/// call, telling ringd, before exiting); without one, or the second time,
/// ringctl restores the terminal and exits at once.
enum StopSignals {
    /// The signals handled.
    private static let numbers = [SIGINT, SIGTERM, SIGHUP]
    /// What the first signal does, if a session wants it.
    private static let handler = Mutex<(@Sendable () -> Void)?>(nil)

    /// Blocks the signals in the calling thread. Called first thing in main,
    /// before any other thread exists, so that every thread inherits the mask.
    /// SIGINT and SIGTERM get their default disposition back first: a shell
    /// starts background jobs with SIGINT ignored, and an ignored signal is
    /// discarded instead of reaching `sigwait`. An ignored SIGHUP (`nohup`) stays ignored.
    static func block() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits for the signals on the calling thread (the main thread), for good.
    static func takeSignals(console: Console) -> Never {
        var set = signalSet()
        var received: Int32 = 0
        var count = 0
        while true {
            guard sigwait(&set, &received) == 0 else { continue }
            count += 1
            if count == 1, let handle = handler.withLock({ $0 }) {
                handle()
                continue
            }
            console.eraseInterruptEcho()
            let message = count == 1 ? "interrupted" : "interrupted again; quitting without waiting for ringd"
            console.fail(Failure(code: "INTERRUPTED", message: message, line: message, exitCode: .interrupted))
            terminate(.interrupted)
        }
    }

    /// Makes the first signal call `handle` instead of exiting.
    static func onFirstSignal(_ handle: @escaping @Sendable () -> Void) {
        handler.withLock { $0 = handle }
    }

    /// The set of handled signals.
    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        return set
    }
}
