import SignalProtocol
import Synchronization

/// The requests of one connection waiting for their results, by request id.
/// Once the connection is gone every waiting request fails, and so does every
/// request registered afterwards.
final class PendingRequests: Sendable {
    /// How a request ends: the result's typed data, or why there is none.
    typealias Outcome = Result<ResultData, ClientError>

    private struct Waiting {
        /// What the result answers, which says how its data reads.
        var type: RequestType
        var continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var waiting: [String: Waiting] = [:]
        var closedError: ClientError?
    }

    private let state = Mutex(State())

    /// Starts waiting for the result of `id`, a request of `type`. Returns
    /// false, having resumed `continuation` with the connection's failure,
    /// when the connection is gone.
    func register(_ id: String, answering type: RequestType, _ continuation: CheckedContinuation<Outcome, Never>) -> Bool {
        let closedError = state.withLock { state -> ClientError? in
            if let error = state.closedError { return error }
            state.waiting[id] = Waiting(type: type, continuation: continuation)
            return nil
        }
        guard let closedError else { return true }
        continuation.resume(returning: .failure(closedError))
        return false
    }

    /// Ends the wait for `id` with the result's raw `outcome`, decoded for
    /// the request it answers; a no-op when nothing waits for it (it timed
    /// out, or the id is not one of ours).
    func complete(_ id: String, with outcome: Result<JSONValue, ClientError>) {
        guard let waiting = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return }
        waiting.continuation.resume(returning: outcome.flatMap { data in
            Result { () throws(ClientError) in try Self.decode(data, answering: waiting.type) }
        })
    }

    /// Fails every waiting request, and every later one, with `error`.
    func failAll(_ error: ClientError) {
        let waiting = state.withLock { state in
            state.closedError = state.closedError ?? error
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for entry in waiting { entry.continuation.resume(returning: .failure(error)) }
    }

    /// The typed `data` of a successful result to a request of `type`; a
    /// shape the protocol does not allow is ``ClientErrorCode/protocolViolation``.
    static func decode(_ data: JSONValue, answering type: RequestType) throws(ClientError) -> ResultData {
        do {
            return try ResultData(json: data, answering: type)
        } catch {
            throw .protocolViolation("the \(type.rawValue) result is malformed: \(error.message)")
        }
    }
}
