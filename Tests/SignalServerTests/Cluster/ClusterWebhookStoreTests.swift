import TestSupport
import Testing

@testable import SignalServer

/// The webhook leader's outbox on its worker (``ClusterWebhookStore``):
/// what happens to a row whose attempt the database would not record.
@Suite(.serialized, .blocking) struct ClusterWebhookStoreTests {
    /// A leading node's store over a throwaway database, and a connection of the test's own.
    static func leading() throws -> (ThrowawayPostgres, ClusterNode, PostgresConnection) {
        let server = try ThrowawayPostgres()
        var settings = ClusterSettings()
        settings.backend = .postgres
        settings.url = server.url
        let node = try ClusterNode(settings: settings, name: "webhook-store")
        node.workers.start()
        node.webhookStore.lead()
        return (server, node, try server.migratedConnection())
    }

    /// The leader's term never claims its own rows again, so a row whose
    /// attempt was not recorded would stay pending, sent already, until
    /// another node led; the next claim round records it instead.
    @Test func anAttemptThatCouldNotBeRecordedIsRecordedAtTheNextClaimRound() throws {
        let (server, node, db) = try Self.leading()
        defer {
            _ = node.workers.stop()
            server.stop()
        }
        let store = node.webhookStore
        try db.insert([WebhookDelivery.fixture(8), WebhookDelivery.fixture(16)])
        let claimed = try waitForResult { store.pendingWebhookDeliveries(from: 0, limit: 10, completion: $0) }.get()
        #expect(claimed.map(\.seq) == [8, 16])

        // The database refuses to record a delivery, as it would while unreachable.
        try db.run(
            script: """
                CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
                CREATE TRIGGER refuse BEFORE UPDATE ON webhook_deliveries FOR EACH ROW
                    WHEN (NEW.status = 'delivered') EXECUTE FUNCTION refuse();
                """)
        var delivered = claimed[0]
        delivered.status = .delivered
        delivered.attempts = 1
        delivered.lastStatus = 200
        let refused = try waitForResult { store.saveWebhookAttempt(delivered, completion: $0) }
        #expect(throws: StoreError.self) { try refused.get() }
        #expect(try waitForResult { store.pendingWebhookDeliveries(from: 0, limit: 10, completion: $0) }.get().isEmpty)
        #expect(try db.execute("SELECT status FROM webhook_deliveries WHERE seq = 8").string(0, 0) == "pending")

        try db.execute("DROP TRIGGER refuse ON webhook_deliveries")
        #expect(try waitForResult { store.pendingWebhookDeliveries(from: 0, limit: 10, completion: $0) }.get().isEmpty)
        let rows = try db.execute("SELECT seq, status, attempts FROM webhook_deliveries ORDER BY seq")
        #expect(rows.string(0, 1) == "delivered" && rows.int64(0, 2) == 1, "recorded at the next round")
        #expect(rows.string(1, 1) == "pending", "the other row is untouched")
    }
}
