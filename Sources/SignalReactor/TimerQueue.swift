import SignalSystem

/// Identifies a scheduled timer so it can be cancelled.
public struct TimerID: Hashable, Sendable {
    let rawValue: UInt64
}

/// The timers of one event loop: a binary min-heap of deadlines with lazy
/// cancellation (a cancelled timer's heap entry is skipped when it surfaces).
struct TimerQueue {
    private struct Entry {
        var deadline: Deadline
        var id: UInt64

        /// Earlier deadline first; equal deadlines in scheduling order.
        func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && id < other.id)
        }
    }

    private var heap: [Entry] = []
    private var actions: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 1

    mutating func schedule(at deadline: Deadline, _ action: @escaping () -> Void) -> TimerID {
        let id = nextID
        nextID += 1
        actions[id] = action
        heap.append(Entry(deadline: deadline, id: id))
        siftUp(heap.count - 1)
        return TimerID(rawValue: id)
    }

    /// Cancels a timer; a no-op if it already ran or was cancelled.
    mutating func cancel(_ id: TimerID) {
        actions[id.rawValue] = nil
        if actions.isEmpty { heap.removeAll() }
    }

    /// The earliest live deadline, dropping cancelled entries on the way.
    mutating func nextDeadline() -> Deadline? {
        while let top = heap.first {
            if actions[top.id] != nil { return top.deadline }
            popTop()
        }
        return nil
    }

    /// Removes and returns the action of the earliest timer due at `now`.
    mutating func popDue(now: Deadline) -> (() -> Void)? {
        while let top = heap.first, top.deadline <= now {
            popTop()
            if let action = actions.removeValue(forKey: top.id) { return action }
        }
        return nil
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count && heap[right].precedes(heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
