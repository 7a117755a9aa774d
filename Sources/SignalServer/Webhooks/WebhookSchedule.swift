/// When the first delivery of each call's queue is due: a binary min-heap
/// by due time (ties in the order pushed), so that picking what is due
/// costs a logarithm per delivery however many calls wait. An entry names
/// the delivery it was pushed for; one whose queue moved on since is stale,
/// and the dispatcher skips it.
struct WebhookSchedule {
    struct Entry {
        var dueAt: Int64
        var order: UInt64
        var endpoint: String
        var sessionId: String
        /// The position of the delivery that was first when it was pushed.
        var seq: Int64

        func precedes(_ other: Entry) -> Bool { (dueAt, order) < (other.dueAt, other.order) }
    }

    private var heap: [Entry] = []
    private var pushed: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }

    /// The earliest due time, if any entry waits.
    var nextDue: Int64? { heap.first?.dueAt }

    mutating func push(dueAt: Int64, endpoint: String, sessionId: String, seq: Int64) {
        pushed += 1
        heap.append(Entry(dueAt: dueAt, order: pushed, endpoint: endpoint, sessionId: sessionId, seq: seq))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due by `now`.
    mutating func popDue(now: Int64) -> Entry? {
        guard let top = heap.first, top.dueAt <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var first = parent
                if left < heap.count, heap[left].precedes(heap[first]) { first = left }
                if right < heap.count, heap[right].precedes(heap[first]) { first = right }
                if first == parent { break }
                heap.swapAt(parent, first)
                parent = first
            }
        }
        return top
    }
}

/// Schedule entries that fell due while their endpoint had no free slot,
/// first in, first out; taking one is O(1) (the array is compacted once
/// half of it was taken).
struct BlockedQueues {
    private var entries: [WebhookSchedule.Entry] = []
    private var start = 0

    var isEmpty: Bool { start == entries.count }

    mutating func append(_ entry: WebhookSchedule.Entry) { entries.append(entry) }

    mutating func popFirst() -> WebhookSchedule.Entry? {
        guard start < entries.count else { return nil }
        defer {
            start += 1
            if start == entries.count {
                entries.removeAll(keepingCapacity: true)
                start = 0
            } else if start > entries.count / 2 {
                entries.removeFirst(start)
                start = 0
            }
        }
        return entries[start]
    }
}
