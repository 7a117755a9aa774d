import SignalProtocol

/// Cluster mode (docs/CLUSTER.md): inputs become PostgreSQL transactions
/// on the node's worker instead of runs of the service's own machine, and
/// reads go to the database.
extension SignalingService {
    /// Hands an input to the cluster. Refused while stopping, as on one
    /// node; one that cannot commit is answered with ``Refusal/clusterUnavailable``.
    func apply(_ kind: InputKind, _ description: TransitionInput, in cluster: ClusterNode, _ input: @escaping Input) {
        let admission = kind.admission(stopping: core.withLock { $0.stopping }, held: nil)
        guard case .run = admission else { return refuse(admission) }
        cluster.submit(ClusterTransaction(description: description, input: input)) { [self] error in
            Log.warning("a cluster transition failed: \(error.message)")
            switch kind {
            case .request(let address, let id):
                refuse(.refuse(address, id: id, Refusal.clusterUnavailable))
            case .presence(let refusing?):
                deliver([
                    (refusing.address, .frame(resultFrame(id: refusing.id, .failure(Refusal.clusterUnavailable)))),
                    (refusing.address, .close(code: .internalError, reason: "not registered in the cluster")),
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
