/// Items by due time: a binary min-heap (ties in the order pushed), so that
/// taking what is due costs a logarithm per item however many wait. Users
/// push an entry per wait and skip, when it pops, one that went stale
/// meanwhile (cheaper than removing it from the middle). One heap for the
/// event loops' timers (``Deadline``s) and the server's pure schedules
/// (milliseconds as `Int64`), so that the sift logic exists once.
public struct DueHeap<Due: Comparable, Item> {
    fileprivate struct Entry {
        var dueAt: Due
        var order: UInt64
        var item: Item

        /// Earlier due first; equal due times in the order pushed.
        func precedes(_ other: Entry) -> Bool {
            dueAt < other.dueAt || (dueAt == other.dueAt && order < other.order)
        }
    }

    private var heap: [Entry] = []
    private var pushed: UInt64 = 0

    public init() {}

    public var isEmpty: Bool { heap.isEmpty }
    public var count: Int { heap.count }

    /// The earliest due time, if any item waits.
    public var nextDue: Due? { heap.first?.dueAt }

    /// The earliest item and its due time, left in place.
    public var first: (item: Item, dueAt: Due)? { heap.first.map { ($0.item, $0.dueAt) } }

    public mutating func push(_ item: Item, dueAt: Due) {
        pushed += 1
        heap.append(Entry(dueAt: dueAt, order: pushed, item: item))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest item, with its due time, if it is due by `now`.
    public mutating func popDue(now: Due) -> (item: Item, dueAt: Due)? {
        guard let top = heap.first, top.dueAt <= now else { return nil }
        return popFirst()
    }

    /// Removes and returns the earliest item, with its due time, due or not
    /// (to drop a stale entry found at the top).
    public mutating func popFirst() -> (item: Item, dueAt: Due)? {
        guard let top = heap.first else { return nil }
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
        return (top.item, top.dueAt)
    }

    /// Drops every item (when all are known stale).
    public mutating func removeAll() { heap.removeAll() }
}

extension DueHeap: Sendable where Due: Sendable, Item: Sendable {}
extension DueHeap.Entry: Sendable where Due: Sendable, Item: Sendable {}
