import SignalSystem

/// Identifies a scheduled timer so it can be cancelled.
public struct TimerID: Hashable, Sendable {
    let rawValue: UInt64
}

/// The timers of one event loop: a ``DueHeap`` of deadlines with lazy
/// cancellation (a cancelled timer's heap entry is skipped when it surfaces).
struct TimerQueue {
    /// Timer ids by deadline; equal deadlines run in scheduling order.
    private var heap = DueHeap<Deadline, UInt64>()
    private var actions: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 1

    mutating func schedule(at deadline: Deadline, _ action: @escaping () -> Void) -> TimerID {
        let id = nextID
        nextID += 1
        actions[id] = action
        heap.push(id, dueAt: deadline)
        return TimerID(rawValue: id)
    }

    /// Cancels a timer; a no-op if it already ran or was cancelled.
    mutating func cancel(_ id: TimerID) {
        actions[id.rawValue] = nil
        if actions.isEmpty { heap.removeAll() }
    }

    /// The earliest live deadline, dropping cancelled entries on the way.
    mutating func nextDeadline() -> Deadline? {
        while let (id, deadline) = heap.first {
            if actions[id] != nil { return deadline }
            _ = heap.popFirst()
        }
        return nil
    }

    /// Removes and returns the action of the earliest timer due at `now`.
    mutating func popDue(now: Deadline) -> (() -> Void)? {
        while let (id, _) = heap.popDue(now: now) {
            if let action = actions.removeValue(forKey: id) { return action }
        }
        return nil
    }
}
