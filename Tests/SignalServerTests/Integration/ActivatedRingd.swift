import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// `count` different ports on 127.0.0.1 that were free a moment ago
    /// (each bound to port 0 and read; all closed once all are picked).
    static func freePorts(_ count: Int) throws -> [Int] {
        var sockets: [(fd: Int32, port: Int)] = []
        defer { sockets.forEach { close($0.fd) } }
        for _ in 0 ..< count { sockets.append(try boundLoopbackSocket()) }
        return sockets.map(\.port)
    }

    /// The environment a ringd child starts from: this process's, less
    /// ringd's own settings and anything systemd may have handed the test
    /// runner (which must not leak into the ringd under test).
    static func childEnvironment() -> [String: String] {
        ProcessInfo.processInfo.environment.filter { key, _ in
            !["RINGD_", "LISTEN_", "WATCHDOG_", "NOTIFY_SOCKET"].contains { key.hasPrefix($0) }
        }
    }

    /// The lines a child writes to a pipe, read with deadlines.
    final class LineReader {
        private let fd: Int32
        private var pending = ""
        private(set) var closed = false

        init(_ handle: FileHandle) { fd = handle.fileDescriptor }

        /// The next whole line (without its newline), or nil when none came
        /// by `deadline` or the writers closed the pipe.
        func next(until deadline: Double) -> String? {
            while true {
                if let newline = pending.firstIndex(of: "\n") {
                    let line = String(pending[..<newline])
                    pending.removeSubrange(...newline)
                    return line
                }
                guard !closed else { return nil }
                let left = deadline - monotonicSeconds()
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&pfd, 1, Int32(max(0, (left * 1000).rounded(.up))))
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { return nil }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 {
                    closed = true
                } else {
                    pending += String(decoding: chunk[0 ..< count], as: UTF8.self)
                }
            }
        }
    }

    /// ringd under `systemd-socket-activate`, which binds the listening
    /// sockets and holds them for the whole test. It execs a shell loop
    /// that starts ringd again (at most `runs` times) each time it dies,
    /// with LISTEN_PID set to the new ringd's pid, so a killed ringd is
    /// replaced on the same sockets. `systemd-socket-activate` starts its
    /// child on the first connection. Each run writes `pid N` on stdout
    /// before ringd's own readiness lines.
    final class ActivatedRingd {
        let holder: ChildProcess
        let directory: String
        private let stdout: LineReader
        /// The last ringd pid reported, unless ``kill(_:)`` killed it.
        private var live: Int32?

        /// `sockets` are `127.0.0.1:PORT` addresses with their fd names;
        /// `environment` reaches ringd through `-E`.
        init(
            binary: String, directory: String, sockets: [(port: Int, name: String)], runs: Int,
            environment: [String: String]
        ) throws {
            self.directory = directory
            let configPath = directory + "/config.json"
            guard FileManager.default.createFile(atPath: configPath, contents: Data("{}".utf8)) else {
                throw ClientError("cannot write \(configPath)")
            }
            var arguments = sockets.map { "--listen=127.0.0.1:\($0.port)" }
            arguments.append("--fdname=" + sockets.map(\.name).joined(separator: ":"))
            for (key, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["-E", "\(key)=\(value)"] }
            let script = """
                run=0
                while [ "$run" -lt "$3" ]; do
                  run=$((run + 1))
                  sh -c 'echo "pid $$"; export LISTEN_PID=$$; exec "$0" --config "$1"' "$1" "$2"
                done
                """
            arguments += ["--", "/bin/sh", "-c", script, "ringd-runs", binary, configPath, String(runs)]
            holder = try ChildProcess(
                "systemd-socket-activate", arguments, environment: childEnvironment(),
                stdout: .pipe, stderr: .file(directory + "/ringd.log"))
            stdout = LineReader(try #require(holder.standardOutput))
            let listening = sockets.map { "Listening on 127.0.0.1:\($0.port) as " }
            let held = waitUntil(timeout: 10) { [self] in listening.allSatisfy(log.contains) || !holder.isRunning }
            guard held, holder.isRunning else { throw ClientError("systemd-socket-activate did not listen: \(log)") }
        }

        /// Reads stdout until the next run's pid and its `listening …` lines
        /// (`urls` of them); returns the pid and those URLs.
        func nextRun(urls: Int, timeout: Double = 15) throws -> (pid: Int32, urls: [String]) {
            let deadline = monotonicSeconds() + timeout
            var pid: Int32?
            var heard: [String] = []
            while pid == nil || heard.count < urls {
                guard let line = stdout.next(until: deadline) else {
                    throw ClientError(
                        "no ringd run ready within \(timeout)s (pid \(pid.map(String.init) ?? "-"), \(heard)); log: \(log)"
                    )
                }
                if line.hasPrefix("pid "), let number = Int32(line.dropFirst(4)) {
                    pid = number
                    live = number
                    heard = []
                } else if line.hasPrefix("listening ") {
                    heard.append(String(line.dropFirst("listening ".count)))
                }
            }
            return (pid!, heard)
        }

        /// Kills ringd `pid` with SIGKILL; the loop then starts the next run.
        func kill(_ pid: Int32) {
            if live == pid { live = nil }
            _ = Glibc.kill(pid, SIGKILL)
        }

        /// Stops the loop first, so that it starts no other ringd, then
        /// kills the ringd still running (stdout read to the end first for
        /// a run not heard of yet). Killed runs are not signalled again:
        /// their pids may belong to other processes by now.
        func stop() {
            holder.kill()
            while let line = stdout.next(until: monotonicSeconds()) {
                if line.hasPrefix("pid "), let number = Int32(line.dropFirst(4)) { live = number }
            }
            if let live { _ = Glibc.kill(live, SIGKILL) }
            live = nil
        }

        /// systemd-socket-activate's and every ringd run's stderr.
        var log: String {
            (try? String(contentsOfFile: directory + "/ringd.log", encoding: .utf8)) ?? ""
        }

        deinit { stop() }
    }
}
