import Foundation
import SignalClient
import Synchronization

/// A ringd for one test or suite: `ringd --ephemeral` (everything in
/// memory, no file written, a free port) with the test API on under a
/// fresh key, started as a process and stopped by ``stop()``. Tests reach it
/// with the public protocol (``endpoint``, the development auth key) and
/// the test API (``testAPI``).
///
/// ```swift
/// let ringd = try EphemeralRingd.start()
/// defer { ringd.stop() }
/// let alice = try await SignalClient.connect(to: ringd.endpoint,
///                                            credentials: .authKey(uid: "alice", key: EphemeralRingd.authKey))
/// try await ringd.testAPI.useManualClock()
/// ```
public final class EphemeralRingd: Sendable {
    /// The development auth key an ephemeral ringd accepts (any uid may log in with it).
    public static let authKey = "ringd-dev-auth-key"
    /// The development API key for the REST API.
    public static let apiKey = "ringd-dev-api-key"
    /// How long ``start(executable:environment:)`` waits for the readiness line.
    public static let startTimeout = 10.0

    /// The WebSocket endpoint (`ws://127.0.0.1:PORT/v1/ws`).
    public let endpoint: ServerEndpoint
    /// The test API's key (random per process).
    public let testKey: String
    /// The test API, with ``testKey``.
    public var testAPI: TestAPIClient { TestAPIClient(endpoint: endpoint, key: testKey) }
    /// The REST API, with the development API key.
    public var rest: RestClient { RestClient(endpoint: endpoint, apiKey: Self.apiKey) }
    /// The server's port.
    public var port: Int { endpoint.port }

    private let process: Mutex<Process?>

    private init(process: Process, endpoint: ServerEndpoint, testKey: String) {
        self.process = Mutex(process)
        self.endpoint = endpoint
        self.testKey = testKey
    }

    /// Starts `ringd --ephemeral` and returns once it listens. `executable`
    /// defaults to the `ringd` built beside the running program (the test
    /// bundle's `.build/debug`), else `.build/debug/ringd` under the
    /// current directory, else `ringd` on the `PATH`. `environment` adds
    /// configuration (`RINGD_…` variables, e.g. `RINGD_CALLS_RECONNECT_GRACE_SECONDS`);
    /// the caller's own `RINGD_` variables are not passed on. ringd's log
    /// goes to this process's standard error when `showLog` is set.
    public static func start(
        executable: String? = nil, environment: [String: String] = [:],
        showLog: Bool = false
    ) throws(RingdTestingError) -> EphemeralRingd {
        guard let path = executable ?? locateRingd() else {
            throw RingdTestingError("no ringd executable found (build it, or pass executable:)")
        }
        var keyBytes = SystemRandomNumberGenerator()
        let testKey = "test-" + (0 ..< 4).map { _ in String(keyBytes.next() as UInt64, radix: 16) }.joined()
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RINGD_") }
        env["RINGD_TESTING_ENABLED"] = "true"
        env["RINGD_TESTING_KEY"] = testKey
        env.merge(environment) { _, given in given }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--ephemeral"]
        process.environment = env
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = showLog ? FileHandle.standardError : FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw RingdTestingError("starting \(path): \(error)")
        }
        let ringd: EphemeralRingd
        do throws(RingdTestingError) {
            let port = try readPort(from: stdout.fileHandleForReading, of: process)
            ringd = EphemeralRingd(
                process: process, endpoint: ServerEndpoint(host: "127.0.0.1", port: port),
                testKey: testKey)
        } catch {
            process.terminate()
            process.waitUntilExit()
            throw error
        }
        return ringd
    }

    /// Stops ringd (SIGTERM, then SIGKILL after 10 s) and waits for it. Idempotent.
    public func stop() {
        guard
            let process = self.process.withLock({ process in
                defer { process = nil }; return process
            })
        else { return }
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    /// Reads stdout until a whole `listening ws://HOST:PORT` line, for at
    /// most ``startTimeout`` seconds.
    private static func readPort(from handle: FileHandle, of process: Process) throws(RingdTestingError) -> Int {
        let deadline = Date().addingTimeInterval(startTimeout)
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw RingdTestingError("ringd did not listen within \(startTimeout) s") }
            var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(left * 1000) + 1) > 0 else { continue }
            let count = read(handle.fileDescriptor, &buffer, buffer.count)
            guard count > 0 else {
                throw RingdTestingError("ringd exited before listening; start it with showLog: true to see why")
            }
            pending += buffer[..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if line.hasPrefix("listening ws://"), let colon = line.lastIndex(of: ":"),
                    let port = Int(line[line.index(after: colon)...])
                {
                    return port
                }
            }
        }
    }

    private static func locateRingd() -> String? {
        var candidates: [String] = []
        if let program = CommandLine.arguments.first, let slash = program.lastIndex(of: "/") {
            candidates.append(String(program[..<slash]) + "/ringd")
        }
        candidates.append(FileManager.default.currentDirectoryPath + "/.build/debug/ringd")
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append(directory + "/ringd")
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// Why an ``EphemeralRingd`` could not start.
public struct RingdTestingError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
