import SignalProtocol
import Synchronization

/// The requests of one connection waiting for their results, by request id.
/// Once the connection is gone every waiting request fails, and so does every
/// request registered afterwards.
final class PendingRequests: Sendable {
    /// How a request ends: the result's data, or why there is none.
    typealias Outcome = Result<JSONValue, ClientError>

    private struct State {
        var waiting: [String: CheckedContinuation<Outcome, Never>] = [:]
        var closedError: ClientError?
    }

    private let state = Mutex(State())

    /// Starts waiting for the result of `id`. Returns false, having resumed
    /// `continuation` with the connection's failure, when the connection is gone.
    func register(_ id: String, _ continuation: CheckedContinuation<Outcome, Never>) -> Bool {
        let closedError = state.withLock { state -> ClientError? in
            if let error = state.closedError { return error }
            state.waiting[id] = continuation
            return nil
        }
        guard let closedError else { return true }
        continuation.resume(returning: .failure(closedError))
        return false
    }

    /// Ends the wait for `id` with `outcome`; a no-op when nothing waits for it
    /// (it timed out, or the id is not one of ours).
    func complete(_ id: String, with outcome: Outcome) {
        state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: outcome)
    }

    /// Fails every waiting request, and every later one, with `error`.
    func failAll(_ error: ClientError) {
        let waiting = state.withLock { state in
            state.closedError = state.closedError ?? error
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(returning: .failure(error)) }
    }
}
