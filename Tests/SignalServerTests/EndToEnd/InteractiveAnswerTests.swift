import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The interactive path: `ringctl answer` on a real terminal (a tmux pane),
/// accepting with a single key press.
@Suite("EndToEnd: interactive answer", .blocking)
struct InteractiveAnswerTests {
    /// Runs tmux with `arguments`, bounded so a wedged tmux fails the test
    /// instead of hanging the suite; returns its stdout and exit status (nil
    /// when it was killed). Its stdout goes to a file, and it inherits no
    /// other descriptor: the tmux server the first command forks keeps
    /// whatever it inherits for as long as it lives.
    @discardableResult
    private func tmux(_ arguments: [String]) throws -> (output: String, status: Int32?) {
        let path = "/tmp/ringctl-e2e-tmux-\(UUID().uuidString)"
        defer { unlink(path) }
        let child = try ChildProcess("tmux", arguments, stdout: .file(path))
        let termination = child.wait(timeout: 10)
        child.kill()
        let output = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        guard case .exited(let status) = termination else { return (output, nil) }
        return (output, status)
    }

    @Test("pressing a accepts: both sides print the same connected line")
    func pressA() throws {
        let ringctl = try #require(RingctlProcess.binary(), "ringctl is not built")
        try withRingd { ringd in
            let name = "ringctl-e2e-\(UUID().uuidString.prefix(8))"
            let command = "\(ringctl) --server ws://127.0.0.1:\(ringd.port) --as bob answer --once; sleep 30"
            try #require(
                try tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "20", command]).status == 0,
                "tmux is needed for this test (make test installs it)")
            defer { _ = try? tmux(["kill-session", "-t", name]) }
            let screen = { (try? self.tmux(["capture-pane", "-p", "-t", name]).output) ?? "" }
            #expect(waitUntil(timeout: 10) { screen().contains("waiting for calls as bob") }, "\(screen())")

            let alice = try RingctlProcess(
                ["--as", "alice", "--json", "call", "bob", "--hangup-after", "1"], port: ringd.port)
            #expect(
                waitUntil(timeout: 10) { screen().contains("incoming video call from alice · session") }, "\(screen())")
            try tmux(["send-keys", "-t", name, "a"])
            #expect(alice.exitStatus() == 0, "\(alice.errorOutput)")
            let session = try #require(alice.waitForEvent("connected", timeout: 0)?["sessionId"]?.stringValue)
            #expect(waitUntil(timeout: 10) { screen().contains("connected · session \(session)") }, "\(screen())")
            #expect(waitUntil(timeout: 10) { screen().contains("ended") }, "\(screen())")
        }
    }
}
