import Foundation
import SignalProtocol
import SignalServer
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// Where the built `ringd` may be.
    static func ringdCandidates() -> [String] { Repository.executableCandidates("ringd") }

    /// The `ringd` executable, if one was built.
    static func ringdBinary() -> String? { Repository.executable("ringd") }

    /// A `ringd` child process on a free port (or on `port`, to restart a
    /// ringd where its clients look for it), with its store in `directory`.
    /// Killed (SIGKILL) by ``stop()`` or when released.
    final class RingdProcess {
        let process: ChildProcess
        private(set) var port = 0
        let directory: String

        init(
            binary: String, directory: String, port wanted: Int = 0, environment extra: [String: String] = [:],
            config: String = "{}"
        ) throws {
            self.directory = directory
            let configPath = directory + "/config.json"
            guard FileManager.default.createFile(atPath: configPath, contents: Data(config.utf8)) else {
                throw ClientError("cannot write \(configPath)")
            }
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RINGD_") }
            environment["RINGD_LISTEN_PORT"] = String(wanted)
            environment["RINGD_STORE_PATH"] = directory + "/ringd.sqlite"
            environment["RINGD_CALLS_RING_TIMEOUT_SECONDS"] = "30"
            environment["RINGD_THREADS"] = "2"
            environment.merge(extra) { $1 }
            process = try ChildProcess(
                binary, ["--config", configPath], environment: environment,
                stdout: .pipe, stderr: .file(directory + "/ringd.log"))
            let stdout = try #require(process.standardOutput)
            port = try Self.readReadiness(stdout.fileDescriptor, timeout: 15)
        }

        /// Reads stdout until `listening ws://127.0.0.1:PORT` (or `wss://`); returns PORT.
        static func readReadiness(_ fd: Int32, timeout: Double) throws -> Int {
            let deadline = monotonicSeconds() + timeout
            var text = ""
            while monotonicSeconds() < deadline {
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&pfd, 1, 50)
                guard ready > 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 {
                    throw ClientError("ringd closed stdout before listening; got \(text.debugDescription)")
                }
                text += String(decoding: chunk[0 ..< count], as: UTF8.self)
                for line in text.split(separator: "\n") {
                    for prefix in ["listening ws://127.0.0.1:", "listening wss://127.0.0.1:"]
                    where line.hasPrefix(prefix) {
                        if let port = Int(line.dropFirst(prefix.count)) { return port }
                    }
                }
            }
            throw ClientError("no readiness line from ringd within \(timeout)s; got \(text.debugDescription)")
        }

        var pid: Int32 { process.pid }
        var isRunning: Bool { process.isRunning }

        func signal(_ number: Int32) { process.signal(number) }

        /// Whether the process exited within `timeout`.
        func waitForExit(timeout: Double) -> Bool {
            process.wait(timeout: timeout) != nil
        }

        /// Kills the process (if still running) and reaps it.
        func stop() { process.kill() }

        /// The server's log so far (stderr), for failure messages.
        var log: String {
            (try? String(contentsOfFile: directory + "/ringd.log", encoding: .utf8)) ?? ""
        }

        deinit { stop() }
    }

    /// What the clients of a burst were told: sessionId → every status heard
    /// (results and events), plus failures seen before the crash.
    final class Ledger: Sendable {
        private let told = Mutex<[String: [String]]>([:])
        private let failures = Mutex<[String]>([])
        private let done = Atomic<Int>(0)
        private let exited = Atomic<Int>(0)
        let crashed = Flag()

        func record(_ call: Snapshot) {
            told.withLock { $0[call.sessionId, default: []].append(call.status.rawValue) }
        }

        func completed() { done.add(1, ordering: .relaxed) }
        func workerExited() { exited.add(1, ordering: .relaxed) }

        /// A failure is only one if it happened before the crash.
        func failed(_ message: String) {
            if !crashed.isSet { failures.withLock { $0.append(message) } }
        }

        var completedCount: Int { done.load(ordering: .relaxed) }
        var exitedCount: Int { exited.load(ordering: .relaxed) }
        var statuses: [String: [String]] { told.withLock { $0 } }
        var failureList: [String] { failures.withLock { $0 } }
    }
}
