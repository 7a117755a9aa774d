#if canImport(Glibc)
    import Glibc
#endif

/// A point on the monotonic clock, in nanoseconds since an arbitrary start.
public struct Deadline: Comparable, Hashable, Sendable {
    /// Nanoseconds on CLOCK_MONOTONIC.
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The current monotonic time.
    public static func now() -> Deadline {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Deadline(nanoseconds: UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec))
    }

    /// This deadline moved later by `seconds`.
    public func adding(seconds: Double) -> Deadline {
        Deadline(nanoseconds: nanoseconds &+ UInt64(max(0, seconds) * 1e9))
    }

    /// Seconds from `earlier` to this deadline (negative if it is earlier).
    public func seconds(since earlier: Deadline) -> Double {
        (Double(nanoseconds) - Double(earlier.nanoseconds)) / 1e9
    }

    public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}
