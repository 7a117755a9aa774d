import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `ringd` as a child process of one test: its configuration in
/// `config.json` and its store in a data directory (a fresh temporary one
/// unless the test names one), its port learnt from the readiness line
/// (`listening ws://127.0.0.1:PORT`, or `wss://`), its stderr in
/// `ringd.log` there. Start it with ``withRingd(config:environment:arguments:port:directory:workingDirectory:_:)``,
/// which always kills it and removes the directory.
public final class RingdProcess {
    /// The data directory: `config.json`, `ringd.log`, `ringd.sqlite`.
    public let directory: String
    /// The configuration file ringd reads (`--config`), nil when started without one.
    public let configPath: String?
    /// The port it listens on.
    public private(set) var port: Int
    /// `ws` or `wss`, as its readiness line said.
    public private(set) var scheme: String
    /// The running (or last) process.
    public private(set) var process: ChildProcess
    /// Where its stderr goes (appended to by every run).
    public var logPath: String { directory + "/ringd.log" }

    private let arguments: [String]
    private var environment: [String: String]
    private let workingDirectory: String?
    /// Whether ``remove()`` deletes ``directory`` (the fixture made it).
    private let ownsDirectory: Bool

    /// How long a start may take until the readiness line.
    public static let startTimeout = 15.0

    /// The `ringd` executable the tests run.
    public static func binary() throws -> String {
        guard let binary = Repository.executable("ringd") else {
            throw RingdProcessError("no ringd executable among \(Repository.executableCandidates("ringd"))")
        }
        return binary
    }

    /// The environment a ringd child starts from: this process's, less
    /// ringd's own settings and anything systemd may have handed the test
    /// runner (which must not leak into the ringd under test).
    public static func baseEnvironment() -> [String: String] {
        ProcessInfo.processInfo.environment.filter { key, _ in
            !["RINGD_", "LISTEN_", "WATCHDOG_", "NOTIFY_SOCKET"].contains { key.hasPrefix($0) }
        }
    }

    /// Starts ringd and returns once it listens. With a `config` (the
    /// file's text), ringd runs as `ringd --config DIR/config.json
    /// ARGUMENTS` with the tests' settings in its environment: the listen
    /// port `port` (0: a free one), the store `DIR/ringd.sqlite`, a 30 s
    /// ring timeout, two threads. Without one it runs as `ringd ARGUMENTS`
    /// (`--ephemeral`, say) with no setting of the tests'. `environment` is
    /// set over either. `directory`, when given, is the data directory
    /// (the caller's to remove); `workingDirectory` is where ringd starts.
    public init(
        config: String? = "{}", environment: [String: String] = [:], arguments: [String] = [], port: Int = 0,
        directory: String? = nil, workingDirectory: String? = nil
    ) throws {
        if let directory {
            self.directory = directory
            ownsDirectory = false
        } else {
            self.directory = try TemporaryDirectory().path
            ownsDirectory = true
        }
        self.environment = environment
        self.workingDirectory = workingDirectory
        if let config {
            let path = self.directory + "/config.json"
            guard FileManager.default.createFile(atPath: path, contents: Data(config.utf8)) else {
                if ownsDirectory { try? FileManager.default.removeItem(atPath: self.directory) }
                throw RingdProcessError("cannot write \(path)")
            }
            configPath = path
            self.arguments = ["--config", path] + arguments
        } else {
            configPath = nil
            self.arguments = arguments
        }
        do {
            (process, scheme, self.port) = try Self.launch(
                self.arguments,
                Self.settings(port: port, directory: self.directory, config: config != nil)
                    .merging(environment) { $1 }, workingDirectory, self.directory + "/ringd.log")
        } catch {
            if ownsDirectory { try? FileManager.default.removeItem(atPath: self.directory) }
            throw error
        }
    }

    /// The tests' settings for a ringd with a configuration file: none without one.
    private static func settings(port: Int, directory: String, config: Bool) -> [String: String] {
        guard config else { return [:] }
        return [
            "RINGD_LISTEN_PORT": String(port), "RINGD_STORE_PATH": directory + "/ringd.sqlite",
            "RINGD_CALLS_RING_TIMEOUT_SECONDS": "30", "RINGD_THREADS": "2",
        ]
    }

    /// Runs ringd and reads its readiness line; kills it if none comes.
    private static func launch(
        _ arguments: [String], _ environment: [String: String], _ workingDirectory: String?, _ logPath: String
    ) throws -> (process: ChildProcess, scheme: String, port: Int) {
        let process = try ChildProcess(
            try binary(), arguments, environment: baseEnvironment().merging(environment) { $1 },
            directory: workingDirectory, stdout: .pipe, stderr: .file(logPath))
        do {
            let (scheme, port) = try readReadiness(process)
            return (process, scheme, port)
        } catch {
            process.kill()
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw RingdProcessError("\(error)\nringd's log (\(logPath)):\n\(log)")
        }
    }

    /// Reads stdout until `listening ws://127.0.0.1:PORT` (or `wss://`).
    private static func readReadiness(_ process: ChildProcess) throws -> (scheme: String, port: Int) {
        guard let stdout = process.standardOutput else { throw RingdProcessError("ringd's stdout is not piped") }
        let deadline = Date().addingTimeInterval(Self.startTimeout)
        var text = ""
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                throw RingdProcessError("no readiness line within \(Self.startTimeout) s; got \(text.debugDescription)")
            }
            var pfd = pollfd(fd: stdout.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(left * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(stdout.fileDescriptor, $0.baseAddress, $0.count) }
            guard count > 0 else {
                throw RingdProcessError("ringd closed stdout before listening; got \(text.debugDescription)")
            }
            text += String(decoding: chunk[0 ..< count], as: UTF8.self)
            for line in text.split(separator: "\n") {
                for scheme in ["ws", "wss"] {
                    let prefix = "listening \(scheme)://127.0.0.1:"
                    if line.hasPrefix(prefix), let port = Int(line.dropFirst(prefix.count)) { return (scheme, port) }
                }
            }
        }
    }

    /// `ws://127.0.0.1:PORT` (or `wss://`).
    public var url: String { "\(scheme)://127.0.0.1:\(port)" }
    /// The process id of the current run.
    public var pid: Int32 { process.pid }
    /// Whether the current run still runs.
    public var isRunning: Bool { process.isRunning }
    /// How the current run ended, nil while it runs.
    public var termination: ChildProcess.Termination? { process.termination }

    /// Sends `number` to the current run.
    public func signal(_ number: Int32) { process.signal(number) }

    /// Whether the current run exited within `timeout` seconds (``termination`` says how).
    public func waitForExit(timeout: Double) -> Bool { process.wait(timeout: timeout) != nil }

    /// SIGTERM, then how it ended within `timeout` (nil if it still runs).
    public func terminate(timeout: Double = 10) -> ChildProcess.Termination? {
        signal(SIGTERM)
        return process.wait(timeout: timeout)
    }

    /// Kills the current run (SIGKILL) if it still runs, and reaps it.
    public func kill() { process.kill() }

    /// Starts ringd again on the same store and configuration, after
    /// killing (-9) the current run if it still runs: on the same port
    /// unless `samePort` is false, with `environment` instead of the one it
    /// had when given.
    public func restart(samePort: Bool = true, environment: [String: String]? = nil) throws {
        if let environment { self.environment = environment }
        kill()
        (process, scheme, port) = try Self.launch(
            arguments,
            Self.settings(port: samePort ? port : 0, directory: directory, config: configPath != nil)
                .merging(self.environment) { $1 }, workingDirectory, logPath)
    }

    /// Everything ringd wrote to stderr so far, every run's.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Kills ringd and removes the data directory if the fixture made it.
    public func remove() {
        kill()
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    deinit { remove() }

    /// Runs ringd with `arguments` to its end (killed after `timeout`
    /// seconds) from `directory`, in `environment` (over
    /// ``baseEnvironment()``) or exactly `replacing` when given; its stdout
    /// and stderr go to the files `stdout` and `stderr`.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], replacing: [String: String]? = nil,
        directory: String? = nil, stdout: ChildProcess.Stream = .null, stderr: ChildProcess.Stream = .null,
        timeout: Double = 20
    ) throws -> ChildProcess.Termination? {
        let process = try ChildProcess(
            try binary(), arguments, environment: replacing ?? baseEnvironment().merging(environment) { $1 },
            directory: directory, stdout: stdout, stderr: stderr)
        let status = process.wait(timeout: timeout)
        if status == nil { process.kill() }
        return status
    }
}

/// A ringd that did not start, or not as asked.
public struct RingdProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` with a ringd started as ``RingdProcess/init(config:environment:arguments:port:directory:workingDirectory:)``
/// says. Whatever `body` does, ringd is killed and its temporary directory
/// removed afterwards; when `body` throws, ringd's log is attached to the
/// test and named in the error.
public func withRingd<R>(
    config: String? = "{}", environment: [String: String] = [:], arguments: [String] = [], port: Int = 0,
    directory: String? = nil, workingDirectory: String? = nil, _ body: (RingdProcess) throws -> R
) throws -> R {
    let ringd = try RingdProcess(
        config: config, environment: environment, arguments: arguments, port: port, directory: directory,
        workingDirectory: workingDirectory)
    defer { ringd.remove() }
    do {
        return try body(ringd)
    } catch {
        throw RingdProcess.failure(error, of: ringd)
    }
}

extension RingdProcess {
    /// `error` with ringd's log: attached to the current test, and in the
    /// error's description for runs that do not keep attachments.
    fileprivate static func failure(_ error: any Error, of ringd: RingdProcess) -> any Error {
        let log = ringd.log
        Attachment.record(log, named: "ringd.log")
        return RingdProcessError("\(error)\nringd's log (\(ringd.logPath)):\n\(log)")
    }
}
