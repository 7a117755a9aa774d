import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// The real `ringd` with NOTIFY_SOCKET set to a socket the test binds:
    /// READY=1 once it serves, STOPPING=1 on SIGTERM, WATCHDOG=1 when the
    /// watchdog is asked of its pid, and only then.
    @Suite("SignalingIntegration: sd_notify (ringd binary)", .blocking)
    struct SystemdNotifyTests {
        /// ringd and the socket it notifies.
        struct Notified {
            let ringd: ChildProcess
            let stdout: LineReader
            let notify: NotifySocket
            let log: String

            var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        }

        /// Starts ringd through `sh -c '…; exec ringd'`, so that `exports`
        /// can name ringd's pid as `$$`.
        static func start(
            in directory: TemporaryDirectory, exports: String = "",
            environment extra: [String: String] = [:]
        ) throws -> Notified {
            let binary = try RingdProcess.binary()
            let configPath = directory.file("config.json")
            try Data("{}".utf8).write(to: URL(fileURLWithPath: configPath))
            let notify = try NotifySocket(path: directory.file("notify"))
            var environment = childEnvironment()
            environment.merge([
                "RINGD_LISTEN_PORT": "0", "RINGD_STORE_PATH": directory.file("ringd.sqlite"),
                "RINGD_THREADS": "2", "NOTIFY_SOCKET": notify.path,
            ]) { $1 }
            environment.merge(extra) { $1 }
            let log = directory.file("ringd.log")
            let ringd = try ChildProcess(
                "/bin/sh", ["-c", exports + #"exec "$0" --config "$1""#, binary, configPath],
                environment: environment, stdout: .pipe, stderr: .file(log))
            return Notified(
                ringd: ringd, stdout: LineReader(try #require(ringd.standardOutput)), notify: notify, log: log)
        }

        @Test("READY=1 once the readiness line is out and ringd serves; STOPPING=1 on SIGTERM; nothing else")
        func readyThenStopping() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let started = try Self.start(in: directory)
            defer { started.ringd.kill() }
            let ready = try #require(started.notify.nextLines(timeout: 15), "no notification; log: \(started.logText)")
            #expect(ready.first == "READY=1", "\(ready)")
            // The readiness line is written before READY=1 is sent: it is in the pipe already.
            let line = try #require(started.stdout.next(until: monotonicSeconds()), "READY=1 before the readiness line")
            let port = try #require(Int(line.dropFirst("listening ws://127.0.0.1:".count)), "\(line)")
            #expect(line == "listening ws://127.0.0.1:\(port)")
            #expect(ready.contains("STATUS=listening on ws://127.0.0.1:\(port)"), "\(ready)")
            let device = try Device.open(port: port, uid: "alice", deviceId: "a1")
            #expect(try device.activeCall() == nil)
            device.close()

            started.ringd.signal(SIGTERM)
            let stopping = try #require(started.notify.nextLines(timeout: 10), "no STOPPING=1; log: \(started.logText)")
            #expect(stopping.first == "STOPPING=1", "\(stopping)")
            #expect(started.ringd.wait(timeout: 10) == .exited(0), "\(started.logText)")
            // ringd has exited: whatever it sent is queued, so this does not wait.
            #expect(
                started.notify.next(until: monotonicSeconds()) == nil, "without WATCHDOG_USEC there is no WATCHDOG=1")
        }

        @Test("WATCHDOG_USEC with WATCHDOG_PID = ringd's pid: WATCHDOG=1 every half interval")
        func watchdogPings() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let started = try Self.start(
                in: directory, exports: "export WATCHDOG_PID=$$; ",
                environment: ["WATCHDOG_USEC": "1000000"])
            defer { started.ringd.kill() }
            let ready = try #require(started.notify.nextLines(timeout: 15), "no notification; log: \(started.logText)")
            #expect(ready.first == "READY=1", "\(ready)")
            let readyAt = monotonicSeconds()
            for ping in 1 ... 3 {
                let lines = try #require(started.notify.nextLines(timeout: 10), "no WATCHDOG=1 number \(ping)")
                #expect(lines == ["WATCHDOG=1"])
            }
            // Three pings half a second apart take 1.5 s: not much less
            // (the clock starts when the test reads READY=1, a little late).
            let elapsed = monotonicSeconds() - readyAt
            #expect(elapsed > 1.0, "3 pings in \(elapsed) s for WATCHDOG_USEC of 1 s")
        }

        @Test("WATCHDOG_PID naming another process: no WATCHDOG=1, and STOPPING=1 is next")
        func watchdogForAnotherProcess() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let started = try Self.start(
                in: directory,
                environment: [
                    "WATCHDOG_USEC": "100000",
                    "WATCHDOG_PID": String(getpid()),
                ])
            defer { started.ringd.kill() }
            let ready = try #require(started.notify.nextLines(timeout: 15), "no notification; log: \(started.logText)")
            #expect(ready.first == "READY=1", "\(ready)")
            // Ten of the 50 ms intervals it would ping at, were it asked to.
            #expect(started.notify.next(until: monotonicSeconds() + 0.5) == nil)
            started.ringd.signal(SIGTERM)
            #expect(started.notify.nextLines(timeout: 10)?.first == "STOPPING=1")
            #expect(started.ringd.wait(timeout: 10) == .exited(0))
        }
    }
}
