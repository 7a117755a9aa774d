import SignalCore
import SignalServer
import Synchronization
import Testing

/// ``TestClock`` over a system clock the test moves.
@Suite("TestClock")
struct TestClockUnitTests {
    /// A stand-in for the system's clocks.
    final class FakeSystem: Sendable {
        let wall = Atomic<Int64>(1_000_000)
        let monotonic = Atomic<Int64>(5_000)
        func pass(_ ms: Int64) {
            wall.add(ms, ordering: .relaxed)
            monotonic.add(ms, ordering: .relaxed)
        }
        var clock: SignalingClock {
            SignalingClock(
                wall: { self.wall.load(ordering: .relaxed) }, monotonic: { self.monotonic.load(ordering: .relaxed) })
        }
    }

    @Test("real mode follows the system; manual mode is frozen and moves only forward, both clocks together")
    func manual() {
        let system = FakeSystem()
        let clock = TestClock(system: system.clock)
        #expect(clock.now() == SignalingTime(wall: 1_000_000, monotonic: 5_000))
        #expect(clock.set(.manual))
        #expect(!clock.set(.manual))
        system.pass(700)
        #expect(clock.now() == SignalingTime(wall: 1_000_000, monotonic: 5_000))
        clock.advance(toMonotonic: 50_000)
        #expect(clock.now() == SignalingTime(wall: 1_045_000, monotonic: 50_000))
        clock.advance(toMonotonic: 40_000)
        #expect(clock.now().monotonic == 50_000, "never back")
    }

    @Test("back to real time resumes from manual time, never behind it")
    func backToReal() {
        let system = FakeSystem()
        let clock = TestClock(system: system.clock)
        clock.set(.manual)
        clock.advance(toMonotonic: 65_000)
        system.pass(100)
        clock.set(.real)
        #expect(clock.now() == SignalingTime(wall: 1_060_000, monotonic: 65_000))
        system.pass(250)
        #expect(clock.now() == SignalingTime(wall: 1_060_250, monotonic: 65_250))
    }

    @Test("real time that ran past the advances is not added on the way back: deadlines are reached, not skipped")
    func backToRealAfterAWait() {
        let system = FakeSystem()
        let clock = TestClock(system: system.clock)
        clock.set(.manual)
        system.pass(100_000)
        clock.advance(toMonotonic: 15_000)
        clock.set(.real)
        #expect(clock.now() == SignalingTime(wall: 1_010_000, monotonic: 15_000))
        system.pass(5)
        #expect(clock.now() == SignalingTime(wall: 1_010_005, monotonic: 15_005))
    }

    @Test("reset: real mode, the system's wall clock, the monotonic clock not going back")
    func reset() {
        let system = FakeSystem()
        let clock = TestClock(system: system.clock)
        clock.set(.manual)
        clock.advance(toMonotonic: 105_000)
        clock.reset()
        #expect(clock.mode == .real)
        #expect(clock.now().wall == 1_000_000)
        #expect(clock.now().monotonic == 105_000)
    }
}
