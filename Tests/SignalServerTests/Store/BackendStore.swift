import SignalProtocol

@testable import SignalCore
@testable import SignalServer

/// The stores ringd keeps calls in: SQLite in a file or in memory (a single
/// node's ``CallStore``) and PostgreSQL (a cluster node's). The shared
/// store suites run each case on every one through the service's own seam,
/// ``CallBackend``, so both backends answer alike by construction rather
/// than by a copied suite.
enum StoreBackend: String, CaseIterable, Sendable {
    case file, memory, postgres
}

/// A ``CallBackend`` of a ``StoreBackend`` with blocking helpers over its
/// methods; ``close()`` closes it and removes what it made.
///
/// The PostgreSQL one is a ``ClusterNode`` over a ``ThrowawayPostgres``
/// whose worker alone is started: reads and writes run there as in a
/// cluster, but no listener registers the node, renews a lease or fires
/// timers. The node leads the webhooks (``ClusterWebhookStore/lead()``), as
/// the one node that sends a cluster's does, so it claims and records them.
final class BackendStore {
    private enum Opened {
        case sqlite(TestStore)
        case postgres(ThrowawayPostgres, ClusterNode)
    }

    private let opened: Opened
    /// The seam the service reads and writes through.
    let seam: CallBackend

    init(_ backend: StoreBackend) throws {
        switch backend {
        case .file, .memory:
            let test = try TestStore(backend == .file ? .file : .memory)
            opened = .sqlite(test)
            seam = .embedded(test.store)
        case .postgres:
            let server = try ThrowawayPostgres()
            var settings = ClusterSettings()
            settings.backend = .postgres
            settings.url = server.url
            let node: ClusterNode
            do {
                node = try ClusterNode(settings: settings, name: "backend-store")
            } catch {
                server.stop()
                throw error
            }
            node.workers.start()
            node.webhookStore.lead()
            opened = .postgres(server, node)
            seam = .cluster(node)
        }
    }

    /// Runs `body` on the node's worker, as the seam runs its reads (PostgreSQL only).
    private func onWorker<T: Sendable>(
        _ node: ClusterNode, _ body: @escaping @Sendable (PostgresConnection) throws(StoreError) -> T
    ) throws -> T {
        try waitForResult { node.read(body, completion: $0) }.get()
    }

    // MARK: Calls

    /// Saves the snapshots `calls` in order, as changes creating or
    /// updating them at each one's `seq` (transitions are not on the seam:
    /// SQLite commits them, a cluster saves them in its transactions).
    func save(_ calls: [Call]) throws {
        switch opened {
        case .sqlite(let test): try test.store.saveAndWait(calls)
        case .postgres(_, let node):
            for call in calls { try onWorker(node) { db throws(StoreError) in try db.save(call) } }
        }
    }

    func call(_ sessionId: String) throws -> Call? {
        try waitForResult { seam.call(sessionId: sessionId, completion: $0) }.get()
    }

    func logs(_ uid: String, _ query: CallLogFilter = CallLogFilter()) throws -> CallLogPage {
        try waitForResult { seam.callLogs(for: uid, query: query, completion: $0) }.get()
    }

    /// Every page of `uid`'s history for `query`, concatenated.
    func allLogs(_ uid: String, _ query: CallLogFilter) throws -> [CallLog] {
        try everyPage(from: query) { try logs(uid, $0) }
    }

    /// The calls of `uid` changed after `seq`, as resume reads them (not on
    /// the seam: the service asks the store, a cluster's transaction its database).
    func changedCalls(of uid: String, after seq: Int64, limit: Int) throws -> ChangedCalls {
        switch opened {
        case .sqlite(let test):
            try waitForResult { test.store.changedCalls(of: uid, after: seq, limit: limit, completion: $0) }.get()
        case .postgres(_, let node):
            try onWorker(node) { db throws(StoreError) in try db.changedCalls(of: uid, after: seq, limit: limit) }
        }
    }

    // MARK: Revocations

    func saveRevocation(uid: String, at: Int64) throws {
        try waitForResult { seam.saveRevocation(uid: uid, at: at, completion: $0) }.get()
    }

    /// Every revocation, as a start reads them (SQLite) or the listener
    /// when it attaches (PostgreSQL).
    func revocations() throws -> [String: Int64] {
        switch opened {
        case .sqlite(let test): try test.store.loadRevocations()
        case .postgres(_, let node): try onWorker(node) { db throws(StoreError) in try db.revocations() }
        }
    }

    // MARK: Push tokens

    func savePushToken(_ token: RegisteredPushToken, limit: Int) throws -> PushTokenSaved {
        try waitForResult { seam.pushTokens.save(token, limit: limit, completion: $0) }.get()
    }

    func deletePushToken(of device: PushDeviceKey, only token: RegisteredPushToken? = nil) throws -> Bool {
        try waitForResult { seam.pushTokens.delete(of: device, only: token, completion: $0) }.get()
    }

    func clearAlertToken(of device: PushDeviceKey, only token: RegisteredPushToken) throws -> Bool {
        try waitForResult { seam.pushTokens.clearAlertToken(of: device, only: token, completion: $0) }.get()
    }

    /// Every stored token, as a start reads them (SQLite) or the listener
    /// when it attaches (PostgreSQL).
    func pushTokens() throws -> [RegisteredPushToken] {
        switch opened {
        case .sqlite(let test): try test.store.loadPushTokens()
        case .postgres(_, let node): try onWorker(node) { db throws(StoreError) in try db.pushTokens() }
        }
    }

    // MARK: Webhook deliveries

    /// Writes `deliveries` in one transaction, as the outbox writes those
    /// of a commit's changes (in the batch's transaction in SQLite, in the
    /// transition's in PostgreSQL).
    func insert(_ deliveries: [WebhookDelivery]) throws {
        switch opened {
        case .sqlite(let test):
            try waitForResult {
                test.store.submit(writes: true, completion: $0) { connection throws(StoreError) in
                    for delivery in deliveries { try connection.insert(delivery) }
                }
            }.get()
        case .postgres(_, let node):
            try onWorker(node) { db throws(StoreError) in
                try reportingPostgresErrors { () throws(PostgresError) in
                    try db.transaction { () throws(PostgresError) in try db.insert(deliveries) }
                }
            }
        }
    }

    func pendingDeliveries(from seq: Int64, limit: Int) throws -> [WebhookDelivery] {
        try waitForResult { seam.webhookStore.pendingWebhookDeliveries(from: seq, limit: limit, completion: $0) }.get()
    }

    func saveAttempt(_ delivery: WebhookDelivery) throws {
        try waitForResult { seam.webhookStore.saveWebhookAttempt(delivery, completion: $0) }.get()
    }

    func deliveries(_ query: WebhookDeliveryQuery) throws -> (deliveries: [WebhookDelivery], next: String?) {
        try waitForResult { seam.webhookStore.webhookDeliveries(query, completion: $0) }.get()
    }

    func retryDeliveries(endpoint: String? = nil, seq: Int64? = nil, now: Int64) throws -> [WebhookDelivery] {
        try waitForResult {
            seam.webhookStore.retryWebhookDeliveries(endpoint: endpoint, seq: seq, now: now, completion: $0)
        }.get()
    }

    func pruneDeliveries(before cutoff: Int64, limit: Int) throws -> Int {
        try waitForResult { seam.webhookStore.pruneWebhookDeliveries(before: cutoff, limit: limit, completion: $0) }
            .get()
    }

    /// The store's epoch, as a start (SQLite) or a connect's transaction (PostgreSQL) reads it.
    func epoch() throws -> String? {
        switch opened {
        case .sqlite(let test): try test.store.loadContinuity().epoch
        case .postgres(_, let node):
            try onWorker(node) { db throws(StoreError) in
                try reportingPostgresErrors { () throws(PostgresError) in try db.storeEpoch() }
            }
        }
    }

    func close() {
        switch opened {
        case .sqlite(let test): test.close()
        case .postgres(let server, let node):
            node.workers.stop()
            server.stop()
        }
    }
}

extension WebhookDelivery {
    /// A pending delivery of change `seq` whose body holds a non-ASCII
    /// character (bytes must come back as written), for the outbox tests.
    static func fixture(
        _ seq: Int64, endpoint: String = "http://a/hook", session: String = "s1",
        status: WebhookDeliveryStatus = .pending, updatedAt: Int64 = 1000
    ) -> WebhookDelivery {
        WebhookDelivery(
            endpoint: endpoint, seq: seq, eventId: "evt_\(session)_\(seq)", sessionId: session,
            trigger: "call_initiated", createdAt: 1000 + seq, body: Array("{\"seq\":\(seq),\"x\":\"é\"}".utf8),
            status: status, attempts: 0, nextAttemptAt: 1000 + seq, lastStatus: nil, lastError: nil,
            updatedAt: updatedAt)
    }
}
