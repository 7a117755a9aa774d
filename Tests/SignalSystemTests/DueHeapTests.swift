import SignalSystem
import TestSupport
import Testing

@Suite(.blocking) struct DueHeapTests {
    @Test func popsInDueOrderWhateverThePushOrder() {
        var heap = DueHeap<Int64, Int64>()
        var generator = SystemRandomNumberGenerator()
        let dues = (0 ..< 500).map { _ in Int64.random(in: 0 ..< 100, using: &generator) }
        for due in dues { heap.push(due, dueAt: due) }
        #expect(heap.count == dues.count)
        var popped: [Int64] = []
        while let (item, dueAt) = heap.popFirst() {
            #expect(item == dueAt)
            popped.append(dueAt)
        }
        #expect(popped == dues.sorted())
        #expect(heap.isEmpty)
    }

    @Test func equalDueTimesComeOutInPushOrder() {
        var heap = DueHeap<Int64, String>()
        for name in ["a", "b", "c", "d"] { heap.push(name, dueAt: 7) }
        heap.push("early", dueAt: 3)
        var names: [String] = []
        while let (name, _) = heap.popDue(now: 7) { names.append(name) }
        #expect(names == ["early", "a", "b", "c", "d"])
    }

    @Test func popDueLeavesWhatIsNotDueYet() {
        var heap = DueHeap<Int64, String>()
        heap.push("later", dueAt: 20)
        heap.push("sooner", dueAt: 10)
        #expect(heap.nextDue == 10)
        #expect(heap.first?.item == "sooner")
        #expect(heap.popDue(now: 9) == nil)
        #expect(heap.popDue(now: 10)?.item == "sooner")
        #expect(heap.popDue(now: 19) == nil)
        #expect(heap.count == 1)
        #expect(heap.popDue(now: 25)?.dueAt == 20)
        #expect(heap.nextDue == nil)
    }

    @Test func ordersDeadlines() {
        var heap = DueHeap<Deadline, Int>()
        heap.push(2, dueAt: Deadline(nanoseconds: 2_000))
        heap.push(1, dueAt: Deadline(nanoseconds: 1_000))
        #expect(heap.popDue(now: Deadline(nanoseconds: 1_500))?.item == 1)
        #expect(heap.popDue(now: Deadline(nanoseconds: 1_500)) == nil)
    }

    @Test func removeAllEmptiesIt() {
        var heap = DueHeap<Int64, Int>()
        for index in 0 ..< 10 { heap.push(index, dueAt: Int64(index)) }
        heap.removeAll()
        #expect(heap.isEmpty)
        #expect(heap.first == nil)
        #expect(heap.popFirst() == nil)
    }
}
