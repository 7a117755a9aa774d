import Synchronization

/// A queue one test reads from with a deadline: what a transport or a
/// client hands over on its own threads, waited for without sleeps.
final class Inbox<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var waiter: (id: Int, continuation: CheckedContinuation<Element?, Never>)?
        var waiters = 0
        var delivered = 0
    }

    private let state = Mutex(State())

    /// How many elements were put so far.
    var count: Int { state.withLock { $0.delivered } }

    func put(_ element: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, Never>? in
            state.delivered += 1
            guard let waiter = state.waiter else {
                state.items.append(element)
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: element)
    }

    /// The next element, or nil when none came within `timeout` seconds.
    func next(timeout: Double = 10) async -> Element? {
        await withCheckedContinuation { continuation in
            let id = state.withLock { state -> Int? in
                if !state.items.isEmpty { return nil }
                state.waiters += 1
                state.waiter = (state.waiters, continuation)
                return state.waiters
            }
            guard let id else {
                let first = state.withLock { $0.items.removeFirst() }
                return continuation.resume(returning: first)
            }
            Task {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                let expired = state.withLock { state -> CheckedContinuation<Element?, Never>? in
                    guard let waiter = state.waiter, waiter.id == id else { return nil }
                    state.waiter = nil
                    return waiter.continuation
                }
                expired?.resume(returning: nil)
            }
        }
    }
}
