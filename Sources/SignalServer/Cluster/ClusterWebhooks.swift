import SignalProtocol
import Synchronization

/// Webhooks in a cluster (docs/CLUSTER.md, "Webhooks"). Every transition
/// writes its deliveries in its own transaction and notifies
/// ``PostgresConnection/webhookChannel``; one node, the webhook leader,
/// sends them with the usual ``WebhookDispatcher``. The leader is the node
/// whose listener connection holds a session advisory lock: if that
/// connection (or the node) dies, PostgreSQL releases the lock, and another
/// node's next lease round takes it and the pending rows.
final class ClusterWebhooks: Sendable {
    /// The session advisory lock of the webhook leader.
    static let leaderLock: Int64 = 4242002

    let webhooks: Webhooks
    let store: ClusterWebhookStore
    /// Whether a claim is queued on the worker and not done, and whether
    /// one was asked for meanwhile: that one runs once it is done, as its
    /// read may have come before what the new notification tells of.
    private let claims = Mutex((queued: false, again: false))

    init(webhooks: Webhooks, store: ClusterWebhookStore) {
        self.webhooks = webhooks
        self.store = store
    }

    /// Queues the writing of the deliveries of `changes` (inside their
    /// transaction) and the leader's notification.
    func record(_ changes: [CallChange], in pipeline: inout PostgresPipeline) {
        if let insert = PostgresConnection.insert(changes.flatMap(webhooks.outbox.deliveries(of:))) {
            pipeline.append(insert)
        }
    }

    /// Each lease round, on the listener's connection: takes the leader's
    /// lock if it is free, then claims what is new (catching up on a
    /// notification the listener missed).
    func round(on connection: PostgresConnection) throws(PostgresError) {
        if store.term == nil {
            let taken = try connection.execute("SELECT pg_try_advisory_lock($1)", [String(Self.leaderLock)])
            guard taken.string(0, 0) == "t" else { return }
            try listen(on: connection)
            store.lead()
            Log.info("this node sends the cluster's webhooks")
        }
        claim()
    }

    /// Listens for new deliveries, if this node leads (the listener's
    /// `UNLISTEN *` when it registers again on the same connection, which
    /// keeps the lock, undid it).
    func listen(on connection: PostgresConnection) throws(PostgresError) {
        try connection.execute("LISTEN \(PostgresConnection.webhookChannel)")
    }

    var isLeading: Bool { store.term != nil }

    /// The listener's connection is gone, and the lock with it: another
    /// node may lead now. What this node held stays pending for it.
    func resign() {
        guard store.resign() else { return }
        webhooks.dispatcher.drop()
        Log.warning("this node no longer sends the cluster's webhooks (it lost its listening connection)")
    }

    /// Claims the pending deliveries this term does not hold, as many as
    /// memory has room for, on the worker.
    func claim() {
        guard let term = store.term else { return }
        let first = claims.withLock { claims in
            defer { if claims.queued { claims.again = true } else { claims.queued = true } }
            return !claims.queued
        }
        guard first else { return }
        let dispatcher = webhooks.dispatcher
        let room = max(0, dispatcher.memoryLimit - dispatcher.depth.pending)
        store.pendingWebhookDeliveries(from: 0, limit: room) { [self] result in
            if case .success(let deliveries) = result, store.term == term {
                dispatcher.claimed(deliveries, limit: room)
            }
            let again = claims.withLock { claims in
                defer { claims = (queued: false, again: false) }
                return claims.again
            }
            if again { claim() }
        }
    }
}

/// The outbox in the cluster's PostgreSQL, on the node's first worker: what the
/// dispatcher and the REST routes use in cluster mode. Claims and attempts
/// go by the leader's term, so a node that stopped leading neither takes
/// rows nor overwrites what the new leader records.
final class ClusterWebhookStore: WebhookStore {
    private let worker: ClusterWorker
    /// The term this node leads in; nil while it does not.
    private let termState = Mutex<Int64?>(nil)
    /// Attempts whose record failed (the database was unreachable), by
    /// endpoint and change: their rows stay claimed by this term, which
    /// never claims them again, so each claim round records them first.
    private let unsaved = Mutex<[String: WebhookDelivery]>([:])

    init(worker: ClusterWorker) { self.worker = worker }

    var term: Int64? { termState.withLock { $0 } }

    /// Starts a term: a number no term of any node had, so that its claims
    /// tell its rows from every other's.
    func lead() {
        termState.withLock { $0 = Int64.random(in: 1 ... Int64.max) }
    }

    /// Ends the term; false when there was none. A later leader claims
    /// the rows whose attempt this term could not record, and sends them again.
    func resign() -> Bool {
        unsaved.withLock { $0 = [:] }
        return termState.withLock { term in
            defer { term = nil }
            return term != nil
        }
    }

    /// Claims for the term (`seq` is not needed: the claims say what the term holds).
    func pendingWebhookDeliveries(
        from seq: Int64, limit: Int,
        completion: @escaping @Sendable (Result<[WebhookDelivery], StoreError>) -> Void
    ) {
        run(completion) { [self] db throws(StoreError) in
            guard let term else { return [] }
            recordUnsaved(on: db, term: term)
            guard limit > 0 else { return [] }
            return try db.claimWebhookDeliveries(term: term, limit: limit)
        }
    }

    func saveWebhookAttempt(
        _ delivery: WebhookDelivery, completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        run(completion) { [self] db throws(StoreError) in
            guard let term else { return }
            try save(delivery, on: db, term: term)
        }
    }

    /// Records an attempt, or keeps it to record at the next claim round.
    private func save(_ delivery: WebhookDelivery, on db: PostgresConnection, term: Int64) throws(StoreError) {
        let key = delivery.endpoint + " " + String(delivery.seq)
        do throws(StoreError) {
            try db.saveWebhookAttempt(delivery, term: term)
            unsaved.withLock { unsaved in
                // A later attempt recorded supersedes an earlier one that was not.
                if let kept = unsaved[key], kept.attempts <= delivery.attempts { unsaved[key] = nil }
            }
        } catch {
            unsaved.withLock { unsaved in
                if (unsaved[key]?.attempts ?? 0) <= delivery.attempts { unsaved[key] = delivery }
            }
            throw error
        }
    }

    /// Records the attempts whose record failed before. One that fails
    /// again stays kept for the next round (its first failure was logged),
    /// and holds up neither the others nor the claim.
    private func recordUnsaved(on db: PostgresConnection, term: Int64) {
        for delivery in unsaved.withLock({ $0.values.sorted { $0.seq < $1.seq } }) {
            _ = Result { () throws(StoreError) in try save(delivery, on: db, term: term) }
        }
    }

    /// Only the leader prunes: one node's job, not every node's.
    func pruneWebhookDeliveries(
        before cutoff: Int64, limit: Int,
        completion: @escaping @Sendable (Result<Int, StoreError>) -> Void
    ) {
        run(completion) { [self] db throws(StoreError) in
            guard term != nil else { return 0 }
            return try db.pruneWebhookDeliveries(before: cutoff, limit: limit)
        }
    }

    func webhookDeliveries(
        _ query: WebhookDeliveryQuery,
        completion: @escaping @Sendable (Result<(deliveries: [WebhookDelivery], next: String?), StoreError>) -> Void
    ) {
        run(completion) { db throws(StoreError) in try db.webhookDeliveries(query) }
    }

    func retryWebhookDeliveries(
        endpoint: String?, seq: Int64?, now: Int64,
        completion: @escaping @Sendable (Result<[WebhookDelivery], StoreError>) -> Void
    ) {
        run(completion) { db throws(StoreError) in try db.retryWebhookDeliveries(endpoint: endpoint, seq: seq, now: now)
        }
    }

    /// How many deliveries are pending in the whole cluster, and the oldest one's creation time.
    func pendingDepth(completion: @escaping @Sendable (Result<(Int, Int64?), StoreError>) -> Void) {
        run(completion) { db throws(StoreError) in try db.pendingWebhookDepth() }
    }

    private func run<T>(
        _ completion: @escaping @Sendable (Result<T, StoreError>) -> Void,
        _ body: @escaping @Sendable (PostgresConnection) throws(StoreError) -> T
    ) {
        worker.submit(body, completion: completion)
    }
}
