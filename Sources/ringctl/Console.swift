import SignalProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Everything ringctl writes: lines for people or, with `--json`, one JSON
/// object per line on stdout; errors as one line on stderr. Each line leaves
/// in one unbuffered write, so a script reading a pipe sees it at once.
final class Console: Sendable {
    /// Whether stdout gets JSON objects instead of lines for people.
    let json: Bool
    /// Whether stdout is a terminal, where a status line is updated in place.
    let isTerminal: Bool
    /// Whether a status line without its newline is on the screen.
    private let statusLineOpen = Mutex(false)

    /// A console writing JSON objects when `json` is set.
    init(json: Bool) {
        self.json = json
        isTerminal = isatty(STDOUT_FILENO) == 1
    }

    /// Writes a line for people; nothing in JSON mode.
    func say(_ text: String) {
        if !json { emit(text) }
    }

    /// Reports an event: `{"event":name,…fields}` in JSON mode, else `text` if given.
    func report(_ text: String?, event: String, _ fields: [(key: String, value: JSONValue)] = []) {
        if json {
            emit(JSONValue.object([("event", .string(event))] + fields).serialized)
        } else if let text {
            emit(text)
        }
    }

    /// Shows `text` as a status line that the next one replaces (people on a terminal only).
    func status(_ text: String) {
        guard !json, isTerminal else { return }
        statusLineOpen.withLock { open in
            Self.write("\r\u{1B}[K" + text, to: STDOUT_FILENO)
            open = true
        }
    }

    /// Erases the `^C` a terminal echoed at the start of the current line
    /// (people on a terminal only; an open status line ends with a newline anyway).
    func eraseInterruptEcho() {
        guard !json, isTerminal else { return }
        statusLineOpen.withLock { open in
            if !open { Self.write("\r\u{1B}[K", to: STDOUT_FILENO) }
        }
    }

    /// Reports a failure: its line on stderr and, in JSON mode and when
    /// `asEvent`, an `error` event with the exit status.
    func fail(_ failure: Failure, asEvent: Bool = true) {
        statusLineOpen.withLock { open in
            if open { Self.write("\n", to: STDOUT_FILENO) }
            open = false
            Self.write("ringctl: \(failure.line)\n", to: STDERR_FILENO)
        }
        guard asEvent else { return }
        report(
            nil, event: "error",
            [
                ("code", .string(failure.code)), ("message", .string(failure.message)),
                ("exitCode", .integer(Int64(failure.exitCode.rawValue))),
            ])
    }

    /// Writes `ringctl: warning: text` on stderr, in JSON mode too.
    func warn(_ text: String) {
        statusLineOpen.withLock { open in
            if open { Self.write("\n", to: STDOUT_FILENO) }
            open = false
            Self.write("ringctl: warning: \(text)\n", to: STDERR_FILENO)
        }
    }

    /// Writes help text on stdout, in JSON mode too.
    func help(_ text: String) {
        emit(text)
    }

    /// Writes one line on stdout, ending an open status line first (it stays visible).
    private func emit(_ line: String) {
        statusLineOpen.withLock { open in
            Self.write((open ? "\n" : "") + line + "\n", to: STDOUT_FILENO)
            open = false
        }
    }

    /// Writes all of `text` to `descriptor`; a reader that went away is ignored.
    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
