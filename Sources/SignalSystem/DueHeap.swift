/// Items by due time: a binary min-heap (ties in the order pushed), so that
/// taking what is due costs a logarithm per item however many wait. Users
/// push an entry per wait and skip, when it pops, one that went stale
/// meanwhile (cheaper than removing it from the middle). One heap for the
/// event loops' timers (``Deadline``s) and the server's pure schedules
/// (milliseconds as `Int64`), so that the sift logic exists once.
///
/// `@inlinable` throughout: the users are in other modules, and an
/// unspecialized generic heap (witness tables and metadata at every
/// comparison) cost the timer path thousands of instructions per call.
public struct DueHeap<Due: Comparable, Item> {
    @usableFromInline
    struct Entry {
        @usableFromInline var dueAt: Due
        @usableFromInline var order: UInt64
        @usableFromInline var item: Item

        @inlinable
        init(dueAt: Due, order: UInt64, item: Item) {
            self.dueAt = dueAt
            self.order = order
            self.item = item
        }

        /// Earlier due first; equal due times in the order pushed.
        @inlinable
        func precedes(_ other: Entry) -> Bool {
            dueAt < other.dueAt || (dueAt == other.dueAt && order < other.order)
        }
    }

    @usableFromInline var heap: [Entry] = []
    @usableFromInline var pushed: UInt64 = 0

    @inlinable
    public init() {}

    @inlinable
    public var isEmpty: Bool { heap.isEmpty }
    @inlinable
    public var count: Int { heap.count }

    /// The earliest due time, if any item waits.
    @inlinable
    public var nextDue: Due? { heap.first?.dueAt }

    /// The earliest item and its due time, left in place.
    @inlinable
    public var first: (item: Item, dueAt: Due)? { heap.first.map { ($0.item, $0.dueAt) } }

    @inlinable
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
    @inlinable
    public mutating func popDue(now: Due) -> (item: Item, dueAt: Due)? {
        guard let top = heap.first, top.dueAt <= now else { return nil }
        return popFirst()
    }

    /// Removes and returns the earliest item, with its due time, due or not
    /// (to drop a stale entry found at the top).
    @inlinable
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
    @inlinable
    public mutating func removeAll() { heap.removeAll() }
}

extension DueHeap: Sendable where Due: Sendable, Item: Sendable {}
extension DueHeap.Entry: Sendable where Due: Sendable, Item: Sendable {}
