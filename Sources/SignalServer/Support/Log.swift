import SignalProtocol
import SignalSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Line-oriented logging to standard error, one `write` per line so lines
/// from different threads never interleave, as text or JSON
/// (``Log/format``). Never given secrets.
public enum Log {
    public enum Level: Int, Sendable, Comparable {
        /// Failures the operator must see.
        case error = 0
        /// Unusual conditions the server handled.
        case warning = 1
        /// Start-up, shutdown and other milestones.
        case info = 2
        /// Per-connection detail.
        case debug = 3

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// Parses "error", "warning", "info" or "debug".
        public init?(name: String) {
            switch name {
            case "error": self = .error
            case "warning": self = .warning
            case "info": self = .info
            case "debug": self = .debug
            default: return nil
            }
        }

        var name: String {
            switch self {
            case .error: return "error"
            case .warning: return "warning"
            case .info: return "info"
            case .debug: return "debug"
            }
        }
    }

    /// How lines are written (`log.format`).
    public enum Format: String, Sendable, CaseIterable {
        /// `TIME LEVEL message key=value…`, for a terminal.
        case text
        /// One JSON object per line: `time`, `level`, `message` and the
        /// line's fields, for a log pipeline.
        case json
    }

    private static let threshold = Atomic<Int>(Level.info.rawValue)
    private static let jsonFormat = Atomic<Bool>(false)

    /// The most detailed level written.
    public static var level: Level {
        get { Level(rawValue: threshold.load(ordering: .relaxed)) ?? .info }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    public static var format: Format {
        get { jsonFormat.load(ordering: .relaxed) ? .json : .text }
        set { jsonFormat.store(newValue == .json, ordering: .relaxed) }
    }

    /// Whether `level` is written; check before building an expensive message.
    public static func isEnabled(_ level: Level) -> Bool { level.rawValue <= threshold.load(ordering: .relaxed) }

    /// A line's structured details (`sessionId`, `uid`, `remote`…): JSON
    /// members in the json format, ` key=value` after the message in text.
    public typealias Fields = [(key: String, value: String)]

    public static func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> Fields = []) {
        write(.error, message, fields)
    }
    public static func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> Fields = []) {
        write(.warning, message, fields)
    }
    public static func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> Fields = []) {
        write(.info, message, fields)
    }
    public static func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> Fields = []) {
        write(.debug, message, fields)
    }

    /// A warning that can repeat many times a second (refused connections,
    /// an exhausted descriptor table, a failing endpoint): the first
    /// ``LogThrottle/burst`` of each `kind` in a minute are written, the rest
    /// counted and reported with the next one written.
    public static func repeatedWarning(
        _ kind: String, _ message: @autoclosure () -> String,
        _ fields: @autoclosure () -> Fields = []
    ) {
        repeated(.warning, kind, message(), fields())
    }

    /// ``repeatedWarning(_:_:_:)`` at any level (access lines a client can
    /// make as many of as it likes).
    public static func repeated(
        _ level: Level, _ kind: String, _ message: @autoclosure () -> String,
        _ fields: @autoclosure () -> Fields = []
    ) {
        guard isEnabled(level) else { return }
        guard let suppressed = throttle.admit(kind, now: Double(Deadline.now().nanoseconds) / 1e9) else { return }
        var details = fields()
        if suppressed > 0 { details.append(("suppressed", String(suppressed))) }
        write(level, message, { details })
    }

    private static let throttle = LogThrottle()

    private static func write(_ level: Level, _ message: () -> String, _ fields: () -> Fields) {
        guard isEnabled(level) else { return }
        var line = format == .json ? jsonLine(level, message(), fields()) : textLine(level, message(), fields())
        line.withUnsafeMutableBytes { bytes in
            _ = Glibc.write(STDERR_FILENO, bytes.baseAddress, bytes.count)
        }
    }

    static func textLine(_ level: Level, _ message: String, _ fields: Fields) -> [UInt8] {
        let details = fields.map { " \($0.key)=\($0.value)" }.joined()
        return Array("\(timestamp()) \(level.name) \(message)\(details)\n".utf8)
    }

    static func jsonLine(_ level: Level, _ message: String, _ fields: Fields) -> [UInt8] {
        var members: [(key: String, value: JSONValue)] = [
            ("time", .string(timestamp())), ("level", .string(level.name)),
            ("message", .string(message)),
        ]
        for (key, value) in fields where !["time", "level", "message"].contains(key) {
            members.append((key, .string(value)))
        }
        var bytes: [UInt8] = []
        JSONValue.object(members).write(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// The current UTC time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + "\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
    }
}
