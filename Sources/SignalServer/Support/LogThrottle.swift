import Synchronization

/// Which repeated warnings are written: per kind, the first ``burst`` in
/// each window of ``window`` seconds; the rest are counted, and the count
/// goes with the next line written.
final class LogThrottle: Sendable {
    static let burst = 5
    static let window = 60.0

    private struct Kind {
        var windowStart: Double
        var written: Int
        var suppressed: Int
    }

    private let kinds = Mutex<[String: Kind]>([:])

    /// Nil when this line is suppressed; else how many of its kind were
    /// suppressed since the last one written.
    func admit(_ kind: String, now: Double) -> Int? {
        kinds.withLock { kinds in
            var entry = kinds[kind] ?? Kind(windowStart: now, written: 0, suppressed: 0)
            if now - entry.windowStart >= Self.window {
                entry.windowStart = now
                entry.written = 0
            }
            guard entry.written < Self.burst else {
                entry.suppressed += 1
                kinds[kind] = entry
                return nil
            }
            entry.written += 1
            let suppressed = entry.suppressed
            entry.suppressed = 0
            kinds[kind] = entry
            return suppressed
        }
    }
}
