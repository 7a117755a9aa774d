import Foundation
import SignalProtocol
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a child process wrote, collected by reader threads.
final class CapturedOutput: Sendable {
    /// Complete stdout lines so far.
    let lines = Mutex<[String]>([])
    /// All of stderr, once it closed.
    let errors = Mutex<String>("")
    /// Whether stdout reached its end.
    let finished = Atomic<Bool>(false)
    /// Whether stderr reached its end (and ``errors`` holds all of it).
    let errorsFinished = Atomic<Bool>(false)
}

/// A `ringctl` child process whose stdout is read line by line as it comes.
final class RingctlProcess {
    private let process: ChildProcess
    private let captured = CapturedOutput()

    /// The built `ringctl`.
    static func binary() -> String? { Repository.executable("ringctl") }

    /// Starts `ringctl` with `arguments`, talking to the server on `port`
    /// (at `server`, a URL with that port, when given).
    convenience init(_ arguments: [String], port: Int, server: String? = nil) throws {
        try self.init(arguments: ["--server", server ?? "ws://127.0.0.1:\(port)"] + arguments)
    }

    /// Starts `ringctl` with exactly `arguments`, and of the test's
    /// environment the variables not meant for ringctl plus `environment`.
    init(arguments: [String], environment: [String: String] = [:]) throws {
        guard let binary = Self.binary() else { throw TestSocketError("ringctl is not built") }
        process = try ChildProcess(
            binary, arguments,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RINGCTL_") }
                .merging(environment) { _, given in given },
            stdout: .pipe, stderr: .pipe)
        guard let output = process.standardOutput, let errorOutput = process.standardError else {
            throw TestSocketError("ringctl's output is not piped")
        }
        let captured = self.captured
        Thread {
            let handle = output
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex ..< newline], as: UTF8.self)
                    captured.lines.withLock { $0.append(line) }
                    pending.removeSubrange(pending.startIndex ... newline)
                }
            }
            captured.finished.store(true, ordering: .releasing)
        }.start()
        Thread {
            let text = String(decoding: errorOutput.readDataToEndOfFile(), as: UTF8.self)
            captured.errors.withLock { $0 = text }
            captured.errorsFinished.store(true, ordering: .releasing)
        }.start()
    }

    /// Every stdout line so far.
    var output: [String] { captured.lines.withLock { $0 } }

    /// Standard error (complete once the process exited).
    var errorOutput: String { captured.errors.withLock { $0 } }

    /// The stdout lines parsed as JSON objects (`--json`).
    var jsonLines: [JSONValue] { output.compactMap { try? JSONValue.parse($0) } }

    /// Waits until a `--json` line with `"event": name` appears; returns it.
    func waitForEvent(_ name: String, timeout: Double = 10) -> JSONValue? {
        var found: JSONValue?
        _ = waitUntil(timeout: timeout) {
            found = jsonLines.first { $0["event"]?.stringValue == name }
            return found != nil
        }
        return found
    }

    /// Sends a signal.
    func signal(_ number: Int32) { process.signal(number) }

    /// Waits for the exit and the end of both outputs; returns the status,
    /// nil on timeout (the process is then killed).
    func exitStatus(timeout: Double = 20) -> Int32? {
        guard
            waitUntil(
                timeout: timeout,
                {
                    !process.isRunning && captured.finished.load(ordering: .acquiring)
                        && captured.errorsFinished.load(ordering: .acquiring)
                }),
            case .exited(let status) = process.termination
        else {
            process.kill()
            return nil
        }
        return status
    }
}
