import SignalCore
import SignalProtocol

/// Where a service's calls are decided and kept: the one seam between the
/// signaling service and its storage, and the one place that tells a single
/// node from a cluster node.
///
/// - `embedded`: the service's own ``CallStateMachine`` decides (in
///   ``SignalingService/core``) and one SQLite ``CallStore`` commits what it
///   changed, in batches, before anyone hears of it.
/// - `cluster`: each input is one transaction on the cluster's PostgreSQL,
///   decided there by a machine seeded from the locked rows
///   (``ClusterTransaction``, docs/CLUSTER.md). No SQLite store is open.
///
/// Both answer the same reads (histories, a call by session id), keep
/// revocations, push tokens and webhook rows, and report the same errors
/// (``StoreError``); the store suites run each read on both.
public enum CallBackend: Sendable {
    case embedded(CallStore)
    case cluster(ClusterNode)

    /// The SQLite store, on a node of its own.
    var embeddedStore: CallStore? {
        if case .embedded(let store) = self { store } else { nil }
    }

    /// The cluster node, in a cluster.
    var clusterNode: ClusterNode? {
        if case .cluster(let node) = self { node } else { nil }
    }

    /// The number stamped into device addresses: this node's in a cluster,
    /// 0 on its own (``DeviceAddress/node``).
    var node: Int64 {
        switch self {
        case .embedded: 0
        case .cluster(let node): node.number
        }
    }

    /// Why this node takes no devices now, for `/readyz` and `/v1/ws` (503):
    /// a cluster node without its database, whose clients are better served
    /// by another node: its listener lost the database (it has no number),
    /// or its worker cannot connect. Nil when it serves.
    var unavailable: String? {
        guard case .cluster(let node) = self else { return nil }
        guard node.number != 0 else { return "this node has no connection to the cluster's database; try another" }
        return node.workers.unavailable.map { $0 + "; try another node" }
    }

    /// When a WebSocket upgrade refused for load may come back (ms): a
    /// cluster node whose workers' queue is full (``ClusterWorkers``)
    /// takes no new device, whose `auth` would be one more input. Nil
    /// when it takes them; counted as shed when not.
    func overloadedRetryAfterMillis() -> Int64? {
        guard case .cluster(let node) = self, node.workers.isFull else { return nil }
        node.workers.countShed()
        return node.workers.retryAfterMillis
    }

    /// Whether the service's own machine holds every live call, so a REST
    /// read of one may answer from memory without asking the store.
    var decidesInMemory: Bool {
        if case .embedded = self { true } else { false }
    }

    /// Applies one input: on the service's machine and committed to SQLite,
    /// or as a transaction on the cluster's database.
    func apply(
        _ kind: InputKind, _ description: TransitionInput, on loop: SignalingLoop?,
        _ input: @escaping SignalingService.Input, for service: SignalingService
    ) {
        switch self {
        case .embedded(let store): service.applyEmbedded(kind, description, on: loop, to: store, input)
        case .cluster(let node): node.apply(kind, description, for: service, input)
        }
    }

    /// A page of `uid`'s call history.
    func callLogs(
        for uid: String, query: CallLogFilter,
        completion: @escaping @Sendable (Result<CallLogPage, StoreError>) -> Void
    ) {
        switch self {
        case .embedded(let store): store.callLogs(for: uid, query: query, completion: completion)
        case .cluster(let node):
            // On the user's worker: after the inputs the user sent before.
            node.read(
                key: uid, { db throws(StoreError) in try db.callLogs(for: uid, query: query) }, completion: completion)
        }
    }

    /// A call as the store holds it, live or ended; nil if it never was.
    /// `uid` is who asks, when a user does: in a cluster the read runs
    /// after the inputs that user sent before.
    func call(
        sessionId: String, askedBy uid: String? = nil,
        completion: @escaping @Sendable (Result<Call?, StoreError>) -> Void
    ) {
        switch self {
        case .embedded(let store): store.call(sessionId: sessionId, completion: completion)
        case .cluster(let node):
            node.read(
                key: uid ?? sessionId, { db throws(StoreError) in try db.call(sessionId: sessionId) },
                completion: completion)
        }
    }

    /// Keeps the revocation of `uid`'s tokens issued before `at` durably,
    /// and in a cluster tells every node (a failed broadcast fails the
    /// request, which the caller repeats).
    func saveRevocation(uid: String, at: Int64, completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        switch self {
        case .embedded(let store): store.saveRevocation(uid: uid, revokedAt: at, completion: completion)
        case .cluster(let node):
            node.read(
                key: uid,
                { db throws(StoreError) in
                    try db.saveRevocation(uid: uid, revokedAt: at)
                    try reportingPostgresErrors { () throws(PostgresError) in
                        try ClusterBroadcast.send(ClusterBroadcast.revocation(uid: uid, at: at), on: db)
                    }
                }, completion: completion)
        }
    }

    /// Where push tokens are kept.
    var pushTokens: PushTokenStore {
        switch self {
        case .embedded(let store): .local(store)
        case .cluster(let node): .cluster(node)
        }
    }

    /// Where webhook deliveries are kept (the outbox the transactions write).
    var webhookStore: any WebhookStore {
        switch self {
        case .embedded(let store): store
        case .cluster(let node): node.webhookStore
        }
    }

    /// Commit latency and batch sizes for `GET /metrics` (SQLite only).
    var stats: StoreStats? { embeddedStore?.stats }

    /// Waits until everything queued is committed (on one node; a cluster
    /// commits each input before it answers).
    func flush() { embeddedStore?.flush() }
}
