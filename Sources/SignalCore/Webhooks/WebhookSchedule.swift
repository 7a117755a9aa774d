import SignalSystem

/// When the first delivery of each call's queue is due (a ``DueHeap``). An
/// entry names the delivery it was pushed for; one whose queue moved on
/// since is stale, and the dispatcher skips it.
package struct WebhookSchedule {
    package struct Entry {
        package var dueAt: Int64
        package var endpoint: String
        package var sessionId: String
        /// The position of the delivery that was first when it was pushed.
        package var seq: Int64
    }

    private var heap = DueHeap<Int64, Entry>()

    package init() {}

    package var isEmpty: Bool { heap.isEmpty }

    /// The earliest due time, if any entry waits.
    package var nextDue: Int64? { heap.nextDue }

    package mutating func push(dueAt: Int64, endpoint: String, sessionId: String, seq: Int64) {
        heap.push(Entry(dueAt: dueAt, endpoint: endpoint, sessionId: sessionId, seq: seq), dueAt: dueAt)
    }

    /// Removes and returns the earliest entry if it is due by `now`.
    package mutating func popDue(now: Int64) -> Entry? { heap.popDue(now: now)?.item }
}

/// Schedule entries that fell due while their endpoint had no free slot,
/// first in, first out; taking one is O(1) (the array is compacted once
/// half of it was taken).
package struct BlockedQueues {
    private var entries: [WebhookSchedule.Entry] = []
    private var start = 0

    package init() {}

    package var isEmpty: Bool { start == entries.count }

    package mutating func append(_ entry: WebhookSchedule.Entry) { entries.append(entry) }

    package mutating func popFirst() -> WebhookSchedule.Entry? {
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
