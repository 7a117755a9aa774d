import SignalCore
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The two clocks the signaling service reads (see ``SignalingTime``);
/// tests inject their own.
public struct SignalingClock: Sendable {
    /// Milliseconds since the Unix epoch.
    public let wall: @Sendable () -> Int64
    /// Milliseconds on a clock that never steps (CLOCK_MONOTONIC for the
    /// real one, the same clock the event loops' timers run on).
    public let monotonic: @Sendable () -> Int64

    public init(wall: @escaping @Sendable () -> Int64, monotonic: @escaping @Sendable () -> Int64) {
        self.wall = wall
        self.monotonic = monotonic
    }

    /// The system's clocks.
    public static let system = SignalingClock(
        wall: WallClock.milliseconds,
        monotonic: { Int64(Deadline.now().nanoseconds / 1_000_000) })

    /// The system's clocks; in a debug build, with the wall clock moved by
    /// `RINGD_TESTS_WALL_OFFSET_MS` when set, so that tests can run a
    /// cluster node whose clock is off. A release build (what is deployed)
    /// has no such setting.
    static var configured: SignalingClock {
        #if DEBUG
            if let offset = getenv("RINGD_TESTS_WALL_OFFSET_MS").flatMap({ Int64(String(cString: $0)) }) {
                return SignalingClock(wall: { WallClock.milliseconds() + offset }, monotonic: system.monotonic)
            }
        #endif
        return .system
    }

    /// Now, on both clocks.
    func now() -> SignalingTime { SignalingTime(wall: wall(), monotonic: monotonic()) }
}

/// The wall clock in milliseconds since the Unix epoch.
public enum WallClock {
    /// Now.
    @Sendable public static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
