import Synchronization

/// Consumes an `AsyncStream` in the background so tests can wait for its next
/// element with a deadline instead of sleeping.
final class StreamRecorder<Element: Sendable>: Sendable {
    private struct Waiter {
        let token: Int
        let continuation: CheckedContinuation<Element?, Never>
    }

    private struct State {
        var buffered: [Element] = []
        var finished = false
        var waiter: Waiter?
        var nextToken = 0
    }

    private let state = Mutex(State())

    /// Starts consuming `stream`.
    init(_ stream: AsyncStream<Element>) {
        Task { [self] in
            for await element in stream { append(element) }
            finish()
        }
    }

    private func append(_ element: Element) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state.waiter else {
                state.buffered.append(element)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.continuation.resume(returning: element)
    }

    private func finish() {
        let waiter = state.withLock { state -> Waiter? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.continuation.resume(returning: nil)
    }

    /// The next element; nil when the stream finished or nothing came within `timeout` seconds.
    func next(timeout: Double = 5) async -> Element? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
            let outcome = state.withLock { state -> (ready: Element?, done: Bool, token: Int) in
                if !state.buffered.isEmpty { return (state.buffered.removeFirst(), true, 0) }
                if state.finished { return (nil, true, 0) }
                state.nextToken += 1
                state.waiter = Waiter(token: state.nextToken, continuation: continuation)
                return (nil, false, state.nextToken)
            }
            if outcome.done {
                continuation.resume(returning: outcome.ready)
                return
            }
            Task { [self] in
                try? await Task.sleep(for: .seconds(timeout))
                let expired = state.withLock { state -> Waiter? in
                    guard let waiter = state.waiter, waiter.token == outcome.token else { return nil }
                    state.waiter = nil
                    return waiter
                }
                expired?.continuation.resume(returning: nil)
            }
        }
    }

    /// Whether the stream finished.
    var isFinished: Bool { state.withLock { $0.finished && $0.buffered.isEmpty } }
}

/// A value set on one thread and read on another.
final class ResultBox<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)

    func set(_ value: Value) { storage.withLock { $0 = value } }

    var value: Value? { storage.withLock { $0 } }
}
