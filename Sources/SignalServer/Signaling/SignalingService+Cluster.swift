import SignalCore
import SignalProtocol

/// Cluster mode (docs/CLUSTER.md): inputs become PostgreSQL transactions
/// on the node's worker instead of runs of the service's own machine, and
/// reads go to the database.
extension SignalingService {
    /// Hands an input to the cluster. Refused while stopping, as on one
    /// node; one that cannot commit is answered with `ERR_UNAVAILABLE`.
    func apply(_ kind: InputKind, _ description: TransitionInput, in cluster: ClusterNode, _ input: @escaping Input) {
        let stopping = core.withLock { $0.stopping }
        switch kind {
        case .request(let address, let id) where stopping:
            return deliver([
                (
                    address,
                    .frame(resultFrame(id: id, .failure(SignalError(.unavailable, "the server is shutting down"))))
                )
            ])
        case .presence(let refusing?) where stopping:
            return deliver([
                (
                    refusing.0,
                    .frame(
                        resultFrame(
                            id: refusing.1,
                            .failure(SignalError(.unavailable, "the server is shutting down"))))
                )
            ])
        default:
            break
        }
        cluster.submit(ClusterTransaction(description: description, input: input)) { [self] error in
            Log.warning("a cluster transition failed: \(error.message)")
            let refusal = SignalError(.unavailable, "the cluster's database did not take the change; try again")
            switch kind {
            case .request(let address, let id):
                deliver([(address, .frame(resultFrame(id: id, .failure(refusal))))])
            case .presence(let refusing?):
                deliver([
                    (refusing.0, .frame(resultFrame(id: refusing.1, .failure(refusal)))),
                    (refusing.0, .close(code: .internalError, reason: "not registered in the cluster")),
                ])
            case .presence(nil):
                // Presence must not keep a device that left.
                if case .disconnect(let device) = description { cluster.disconnectLater(device) }
            case .timer:
                break
            }
        }
    }

    /// A page of `uid`'s call history.
    func callLogs(
        for uid: String, query: CallLogFilter,
        completion: @escaping @Sendable (Result<CallLogPage, StoreError>) -> Void
    ) {
        guard let cluster else { return store.callLogs(for: uid, query: query, completion: completion) }
        cluster.read({ db throws(StoreError) in try db.callLogs(for: uid, query: query) }, completion: completion)
    }

    /// A call as the store holds it (for a live call, as the machine does).
    func call(sessionId: String, completion: @escaping @Sendable (Result<Call?, StoreError>) -> Void) {
        guard let cluster else { return store.call(sessionId: sessionId, completion: completion) }
        cluster.read({ db throws(StoreError) in try db.call(sessionId: sessionId) }, completion: completion)
    }

    /// Revokes `uid`'s tokens issued before `at` here, durably, and on every node.
    func revokeTokens(uid: String, at: Int64, completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        tokens.revoke(uid: uid, at: at)
        guard let cluster else { return store.saveRevocation(uid: uid, revokedAt: at, completion: completion) }
        cluster.read(
            { db throws(StoreError) in
                // Durable first; a failed broadcast fails the request, which the caller repeats.
                try db.saveRevocation(uid: uid, revokedAt: at)
                try reportingPostgresErrors { () throws(PostgresError) in
                    try ClusterBroadcast.send(ClusterBroadcast.revocation(uid: uid, at: at), on: db)
                }
            }, completion: completion)
    }

    /// Closes every connection on every loop (a cluster node that lost
    /// the database: its clients reconnect and resume).
    func closeEverySession(code: WebSocketCloseCode, reason: String) {
        for mailbox in mailboxes.withLock({ Array($0.values) }) {
            mailbox.submit { loop in
                guard let state = loop.attachment(SignalingLoop.self) else { return }
                for session in state.openSessions { session.deliver(.close(code: code, reason: reason)) }
            }
        }
    }
}
