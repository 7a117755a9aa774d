import CShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command that may leave a daemon behind (tmux starts its server on
/// the first command), without Foundation's `Process`.
///
/// `Process` on Linux learns that a child exited when a socket it hands the
/// child closes; a daemon the child forks keeps that socket, so
/// `waitUntilExit()` never returns. Here the child inherits no descriptor
/// but stdin (`/dev/null`), stdout (a file) and stderr (`/dev/null`), and
/// the wait is `waitpid` on the child alone, bounded by a deadline.
enum DetachedCommand {
    /// What the command printed and how it ended.
    struct Outcome {
        /// Its standard output.
        var output: String
        /// Its exit status, or nil when it was killed at the deadline.
        var status: Int32?
    }

    /// Runs `arguments` (looked up on `PATH`) and waits up to `timeout`
    /// seconds; a command still running then is killed.
    static func run(_ arguments: [String], timeout: Double = 10) throws -> Outcome {
        let path = "/tmp/ringd-tests-\(UUID().uuidString).out"
        defer { unlink(path) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        guard cshim_spawn_addclosefrom(&actions, 3) == 0 else { throw TestSocketError("posix_spawn cannot close inherited descriptors") }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawnp(&child, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw TestSocketError("cannot run \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        let exited = waitUntil(timeout: timeout) { waitpid(child, &status, WNOHANG) == child }
        if !exited {
            kill(child, SIGKILL)
            waitpid(child, &status, 0)
        }
        let output = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : nil
        return Outcome(output: output, status: exited ? exitStatus : nil)
    }
}
