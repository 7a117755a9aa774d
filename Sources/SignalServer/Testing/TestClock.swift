import SignalCore
import Synchronization

/// The service's clocks under test control: the system's, or frozen and
/// moved only by ``advance(by:)``. Both clocks move together, so call
/// timestamps (wall) and deadlines (monotonic) agree; neither ever goes
/// back, also when the clock returns to real time.
public final class TestClock: Sendable {
    /// Whether the clock is frozen (manual) or follows the system's.
    public enum Mode: String, Sendable {
        case real, manual
    }

    private struct State {
        var mode = Mode.real
        /// Added to the system's clocks in real mode (what manual time ran
        /// ahead of real time before the clock went back to real).
        var wallOffset: Int64 = 0
        var monotonicOffset: Int64 = 0
        /// The frozen time in manual mode.
        var manual = SignalingTime(wall: 0, monotonic: 0)
    }

    private let system: SignalingClock
    private let state = Mutex(State())

    public init(system: SignalingClock = .system) {
        self.system = system
    }

    /// The clocks the signaling service reads.
    public var signalingClock: SignalingClock {
        SignalingClock(wall: { [self] in now().wall }, monotonic: { [self] in now().monotonic })
    }

    public var mode: Mode { state.withLock { $0.mode } }

    /// Now, on both clocks.
    public func now() -> SignalingTime {
        state.withLock { state in
            state.mode == .manual
                ? state.manual
                : SignalingTime(
                    wall: system.wall() + state.wallOffset, monotonic: system.monotonic() + state.monotonicOffset)
        }
    }

    /// Freezes the clock at now, or lets it run again from where it stands.
    /// Returns whether the mode changed.
    @discardableResult
    public func set(_ mode: Mode) -> Bool {
        state.withLock { state in
            guard state.mode != mode else { return false }
            if mode == .manual {
                state.manual = SignalingTime(
                    wall: system.wall() + state.wallOffset,
                    monotonic: system.monotonic() + state.monotonicOffset)
            } else {
                // Real time resumes where manual time stands (behind the
                // system's when real time ran past the advances), both
                // clocks alike, so no deadline comes due without being reached.
                state.wallOffset = state.manual.wall - system.wall()
                state.monotonicOffset = state.manual.monotonic - system.monotonic()
            }
            state.mode = mode
            return true
        }
    }

    /// Moves manual time forward to the monotonic time `monotonic` (never
    /// back); the wall clock moves by as much. Nothing happens in real mode.
    public func advance(toMonotonic monotonic: Int64) {
        state.withLock { state in
            guard state.mode == .manual, monotonic > state.manual.monotonic else { return }
            state.manual.wall += monotonic - state.manual.monotonic
            state.manual.monotonic = monotonic
        }
    }

    /// Back to the system's clocks: real mode, the wall clock the system's
    /// again. The monotonic clock goes on from where it stands (it never
    /// goes back), or from the system's when that is ahead.
    public func reset() {
        state.withLock { state in
            let monotonic = state.mode == .manual ? state.manual.monotonic : system.monotonic() + state.monotonicOffset
            state.monotonicOffset = max(0, monotonic - system.monotonic())
            state.mode = .real
            state.wallOffset = 0
        }
    }
}
