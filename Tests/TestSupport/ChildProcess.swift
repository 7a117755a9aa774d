import CShim
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process (`ringd`, `ringctl`, `tmux`) started with `posix_spawn`
/// and reaped with `waitpid` on its pid alone, not Foundation's `Process`.
///
/// `Process` on Linux learns that a child exited when a socket it hands the
/// child closes. Any process that inherits that socket (a daemon the child
/// forks, like tmux's server, or a child another test spawns at the same
/// moment) keeps it open, and `isRunning` stays true until that other
/// process exits: seconds of lost time, or a `waitUntilExit()` that never
/// returns. Here the child inherits stdin, stdout and stderr and nothing
/// else (but a descriptor passed on purpose), and exit is learned from
/// `waitpid`.
public final class ChildProcess {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A pipe whose other end the parent holds.
        case pipe
        /// A file, appended to (created if missing).
        case file(String)
    }

    /// How the child ended.
    public enum Termination: Equatable, Sendable {
        /// It called `exit` with this status.
        case exited(Int32)
        /// A signal killed it.
        case signalled(Int32)
    }

    /// The child's process id.
    public let pid: pid_t
    /// The parent's end of the child's stdin, when it is a pipe.
    public let standardInput: FileHandle?
    /// The parent's end of the child's stdout, when it is a pipe.
    public let standardOutput: FileHandle?
    /// The parent's end of the child's stderr, when it is a pipe.
    public let standardError: FileHandle?
    private var ended: Termination?

    /// Starts `executable` (a path, or a name looked up on `PATH`) with
    /// `arguments`, in `environment` (this process's when nil), in
    /// `directory` (this process's when nil). `passing`, when given, is the
    /// child's descriptor 3 (a listening socket it serves, say), the one
    /// descriptor beyond the standard streams it inherits.
    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null,
        passing descriptor: Int32? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let directory, cshim_spawn_addchdir(&actions, directory) != 0 {
            throw ChildProcessError("posix_spawn cannot start in \(directory)")
        }
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { childEnds.forEach { _ = close($0) } }
        for (target, stream) in [stdin, stdout, stderr].enumerated() {
            let fd = Int32(target)
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw ChildProcessError("pipe: \(String(cString: strerror(errno)))") }
                let (parent, child) = target == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                parentEnds[target] = parent
                childEnds.append(child)
                posix_spawn_file_actions_adddup2(&actions, child, fd)
            }
        }
        let handles = parentEnds.map { $0.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) } }
        // dup2 clears close-on-exec on the copy (glibc does so even when
        // the descriptor already is 3), so only the copy reaches the child.
        if let descriptor { posix_spawn_file_actions_adddup2(&actions, descriptor, 3) }
        guard cshim_spawn_addclosefrom(&actions, descriptor == nil ? 3 : 4) == 0 else {
            throw ChildProcessError("posix_spawn cannot close inherited descriptors")
        }
        let environmentLines = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environmentLines.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawnp(&child, executable, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw ChildProcessError("cannot run \(executable): \(String(cString: strerror(spawned)))")
        }
        pid = child
        (standardInput, standardOutput, standardError) = (handles[0], handles[1], handles[2])
    }

    /// How the child ended, or nil while it runs (reaps it once it exited).
    public var termination: Termination? {
        if let ended { return ended }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        ended = Self.termination(status)
        return ended
    }

    private static func termination(_ status: Int32) -> Termination {
        (status & 0x7F) == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
    }

    /// Whether the child still runs.
    public var isRunning: Bool { termination == nil }

    /// Waits up to `timeout` seconds for the child to end; nil if it still runs.
    public func wait(timeout: Double) -> Termination? {
        // waitpid has no timeout (and no pidfd here): poll it every 2 ms.
        let deadline = Date().addingTimeInterval(timeout)
        while termination == nil && Date() < deadline { usleep(2_000) }
        return termination
    }

    /// Sends `number` to the child, unless it was already reaped.
    public func signal(_ number: Int32) {
        if ended == nil { _ = Glibc.kill(pid, number) }
    }

    /// Kills the child if it still runs, and reaps it.
    public func kill() {
        guard isRunning else { return }
        signal(SIGKILL)
        var status: Int32 = 0
        if waitpid(pid, &status, 0) == pid { ended = Self.termination(status) }
    }

    deinit { kill() }
}

/// A child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
