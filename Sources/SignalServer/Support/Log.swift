import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Line-oriented logging to standard error, one `write` per line so lines
/// from different threads never interleave. Never given secrets.
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

    private static let threshold = Atomic<Int>(Level.info.rawValue)

    /// The most detailed level written.
    public static var level: Level {
        get { Level(rawValue: threshold.load(ordering: .relaxed)) ?? .info }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Whether `level` is written; check before building an expensive message.
    public static func isEnabled(_ level: Level) -> Bool { level.rawValue <= threshold.load(ordering: .relaxed) }

    public static func error(_ message: @autoclosure () -> String) { write(.error, message) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    public static func info(_ message: @autoclosure () -> String) { write(.info, message) }
    public static func debug(_ message: @autoclosure () -> String) { write(.debug, message) }

    private static func write(_ level: Level, _ message: () -> String) {
        guard isEnabled(level) else { return }
        var line = Array("\(timestamp()) \(level.name) \(message())\n".utf8)
        line.withUnsafeMutableBytes { bytes in
            _ = Glibc.write(STDERR_FILENO, bytes.baseAddress, bytes.count)
        }
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
