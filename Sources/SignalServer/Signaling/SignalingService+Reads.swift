import SignalProtocol

/// What the routes read or keep through the service, from whichever
/// backend it has (``CallBackend``).
extension SignalingService {
    /// A page of `uid`'s call history.
    func callLogs(
        for uid: String, query: CallLogFilter,
        completion: @escaping @Sendable (Result<CallLogPage, StoreError>) -> Void
    ) {
        backend.callLogs(for: uid, query: query, completion: completion)
    }

    /// A call as the store holds it (for a live call, as the machine does).
    func call(sessionId: String, completion: @escaping @Sendable (Result<Call?, StoreError>) -> Void) {
        backend.call(sessionId: sessionId, completion: completion)
    }

    /// Revokes `uid`'s tokens issued before `at` here, durably, and on every
    /// node of a cluster.
    func revokeTokens(uid: String, at: Int64, completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        tokens.revoke(uid: uid, at: at)
        backend.saveRevocation(uid: uid, at: at, completion: completion)
    }

    /// Closes every connection on every loop (a node that can no longer
    /// serve them: its clients reconnect, elsewhere, and resume).
    func closeEverySession(code: WebSocketCloseCode, reason: String) {
        for mailbox in mailboxes.withLock({ Array($0.values) }) {
            mailbox.submit { loop in
                guard let state = loop.attachment(SignalingLoop.self) else { return }
                for session in state.openSessions { session.deliver(.close(code: code, reason: reason)) }
            }
        }
    }
}
