import SignalSystem
import TestSupport
import Testing

@Suite(.blocking) struct DeadlineTests {
    @Test func addingAndMeasuring() {
        let start = Deadline(nanoseconds: 1_000_000_000)
        let later = start.adding(seconds: 1.5)
        #expect(later.nanoseconds == 2_500_000_000)
        #expect(later.seconds(since: start) == 1.5)
        #expect(start.seconds(since: later) == -1.5)
        #expect(start < later)
    }

    @Test func negativeDelaysDoNotMoveBackwards() {
        let start = Deadline(nanoseconds: 5)
        #expect(start.adding(seconds: -3) == start)
    }

    @Test func nowIsMonotonic() {
        let first = Deadline.now(), second = Deadline.now()
        #expect(second >= first)
    }
}
