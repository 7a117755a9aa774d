import SignalProtocol
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a server as a foreground daemon: raises the descriptor limit, takes
/// SIGINT/SIGTERM/SIGHUP on the main thread, prints a readiness line per
/// listener, shuts down gracefully on SIGINT or SIGTERM and reloads the TLS
/// certificate on SIGHUP. Under systemd it listens on the sockets socket
/// activation passes (``InheritedSockets``) and notifies readiness, the
/// stop and the watchdog (``SystemdNotifier``, ``Watchdog``).
public enum Daemon {
    /// Starts a server and blocks until SIGINT or SIGTERM has stopped it.
    /// Returns the process exit status. `configFile`, the file `config` was
    /// read from, is named in the line that says where it listens, and so is
    /// a store in memory.
    public static func run(
        config: ServerConfig, program: String, configFile: String? = nil,
        application makeApplication: () throws -> ServerApplication
    ) -> Int32 {
        Log.level = config.logLevel
        Log.format = config.logFormat
        for name in config.ignoredEnvironment {
            Log.debug("\(program): ignoring \(name): a Kubernetes service link, not a configuration key")
        }
        signal(SIGPIPE, SIG_IGN)
        raiseDescriptorLimit()
        // Block the stop signals before any loop thread exists so every
        // thread inherits the mask and only `sigwait` below receives them.
        var signals = sigset_t()
        sigemptyset(&signals)
        for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, number) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let server: Server
        do {
            let inherited = try InheritedSockets.take()
            server = try Server(config: config, application: try makeApplication(), inherited: inherited)
        } catch {
            printError("\(program): cannot start: \(error)")
            return 1
        }
        let addresses = server.listeners.map { "\($0.address)\($0.isSecure ? " (TLS)" : "")" }
        let source =
            (configFile.map { ", configuration \($0)" } ?? "") + (config.storeIsInMemory ? ", store in memory" : "")
        Log.info(
            "\(program) \(RingdVersion.current) listening on \(addresses.joined(separator: " and ")) with \(config.resolvedThreads) loop(s)\(source)"
        )
        for listener in server.listeners {
            writeLine("listening \(listener.url)", to: STDOUT_FILENO)
        }
        SystemdNotifier.notify("READY=1\nSTATUS=listening on \(server.listeners.map(\.url).joined(separator: " and "))")
        let watchdog = Watchdog(server: server)

        while true {
            let received = nextSignal(&signals, watchdog: watchdog)
            if received == SIGHUP {
                reloadCertificates(server, program: program)
                continue
            }
            Log.info("\(program): signal \(received), shutting down")
            break
        }
        SystemdNotifier.notify("STOPPING=1\nSTATUS=stopping")
        server.shutdown()
        server.wait()
        Log.info("\(program): stopped")
        return 0
    }

    /// Waits for one of `signals` and returns it; meanwhile pings the
    /// watchdog, if there is one, each time its interval elapses.
    static func nextSignal(_ signals: inout sigset_t, watchdog: Watchdog?) -> Int32 {
        guard let watchdog else {
            var received: Int32 = 0
            sigwait(&signals, &received)
            return received
        }
        while true {
            let remaining = watchdog.secondsUntilDue
            guard remaining > 0 else {
                watchdog.ping()
                continue
            }
            let whole = remaining.rounded(.down)
            var timeout = timespec(tv_sec: Int(whole), tv_nsec: Int((remaining - whole) * 1e9))
            let received = sigtimedwait(&signals, nil, &timeout)
            // -1 is EAGAIN (the interval elapsed) or EINTR: look at the clock again.
            if received > 0 { return received }
        }
    }

    /// SIGHUP: loads the TLS certificate and key again for new connections;
    /// live ones keep theirs. A bad file keeps the previous certificate.
    static func reloadCertificates(_ server: Server, program: String) {
        guard let certificates = server.certificates else {
            Log.info("\(program): SIGHUP: no TLS configured, nothing to reload")
            return
        }
        do {
            try certificates.reload()
            Log.info("\(program): SIGHUP: reloaded the TLS certificate \(certificates.certificatePath)")
        } catch {
            Log.error("\(program): SIGHUP: kept the previous TLS certificate: \(error)")
        }
    }

    /// Writes one line to standard error.
    public static func printError(_ message: String) {
        writeLine(message, to: STDERR_FILENO)
    }

    /// Writes `line` and a newline to `descriptor` in one call, unbuffered, so
    /// a reader waiting for it sees it at once.
    static func writeLine(_ line: String, to descriptor: Int32) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { buffer in
            try? syscall("write") { write(descriptor, buffer.baseAddress, buffer.count) }
        }
    }

    /// Raises the soft limit on open descriptors to the hard limit, so the
    /// connection limit, not the default 1024, bounds the server.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        guard (try? syscallExpectingResult("getrlimit") { getrlimit(resource, &limit) }) != nil,
            limit.rlim_cur < limit.rlim_max
        else { return }
        limit.rlim_cur = limit.rlim_max
        _ = try? syscallExpectingResult("setrlimit") { setrlimit(resource, &limit) }
    }
}
