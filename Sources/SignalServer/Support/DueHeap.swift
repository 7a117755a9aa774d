/// Items by due time: a binary min-heap (ties in the order pushed), so that
/// taking what is due costs a logarithm per item however many wait. Users
/// push an entry per wait and skip, when it pops, one that went stale
/// meanwhile (cheaper than removing it from the middle).
struct DueHeap<Item> {
    private struct Entry {
        var dueAt: Int64
        var order: UInt64
        var item: Item

        func precedes(_ other: Entry) -> Bool { (dueAt, order) < (other.dueAt, other.order) }
    }

    private var heap: [Entry] = []
    private var pushed: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    /// The earliest due time, if any item waits.
    var nextDue: Int64? { heap.first?.dueAt }

    /// The earliest item and its due time, left in place.
    var first: (item: Item, dueAt: Int64)? { heap.first.map { ($0.item, $0.dueAt) } }

    mutating func push(_ item: Item, dueAt: Int64) {
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
    mutating func popDue(now: Int64) -> (item: Item, dueAt: Int64)? {
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
        return (top.item, top.dueAt)
    }
}
