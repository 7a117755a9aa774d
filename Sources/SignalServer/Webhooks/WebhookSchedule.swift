import SignalSystem

/// When the first delivery of each call's queue is due (a ``DueHeap``). An
/// entry names the delivery it was pushed for; one whose queue moved on
/// since is stale, and the dispatcher skips it.
struct WebhookSchedule {
    struct Entry {
        var dueAt: Int64
        var endpoint: String
        var sessionId: String
        /// The position of the delivery that was first when it was pushed.
        var seq: Int64
    }

    private var heap = DueHeap<Int64, Entry>()

    var isEmpty: Bool { heap.isEmpty }

    /// The earliest due time, if any entry waits.
    var nextDue: Int64? { heap.nextDue }

    mutating func push(dueAt: Int64, endpoint: String, sessionId: String, seq: Int64) {
        heap.push(Entry(dueAt: dueAt, endpoint: endpoint, sessionId: sessionId, seq: seq), dueAt: dueAt)
    }

    /// Removes and returns the earliest entry if it is due by `now`.
    mutating func popDue(now: Int64) -> Entry? { heap.popDue(now: now)?.item }
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
