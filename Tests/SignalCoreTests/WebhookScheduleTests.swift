import TestSupport
import Testing

@testable import SignalCore

/// The dispatcher's schedule: due entries come out earliest first, ties in
/// the order pushed; blocked entries first in, first out.
@Suite(.blocking) struct WebhookScheduleTests {
    @Test func dueEntriesComeOutEarliestFirstAndTiesInOrder() {
        var schedule = WebhookSchedule()
        let times: [Int64] = [50, 10, 30, 10, 40, 20, 10]
        for (index, time) in times.enumerated() {
            schedule.push(dueAt: time, endpoint: "e", sessionId: "s\(index)", seq: Int64(index))
        }
        #expect(schedule.nextDue == 10)
        var popped: [Int64] = []
        while let entry = schedule.popDue(now: 40) { popped.append(entry.seq) }
        #expect(popped == [1, 3, 6, 5, 2, 4], "by due time, ties in push order")
        #expect(schedule.nextDue == 50)
        #expect(schedule.popDue(now: 49) == nil)
        #expect(schedule.popDue(now: 50)?.seq == 0)
        #expect(schedule.isEmpty)
    }

    @Test func blockedQueuesAreFirstInFirstOut() {
        var blocked = BlockedQueues()
        for seq in 0 ..< 10 { blocked.append(.init(dueAt: 0, endpoint: "e", sessionId: "s", seq: Int64(seq))) }
        var taken: [Int64] = []
        for _ in 0 ..< 7 { taken.append(blocked.popFirst()?.seq ?? -1) }
        blocked.append(.init(dueAt: 0, endpoint: "e", sessionId: "s", seq: 10))
        while let entry = blocked.popFirst() { taken.append(entry.seq) }
        #expect(taken == Array(0 ... 10))
        #expect(blocked.isEmpty)
    }
}
