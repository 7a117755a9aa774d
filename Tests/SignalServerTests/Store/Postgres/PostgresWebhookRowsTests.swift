import TestSupport
import Testing

@testable import SignalServer

/// The webhook outbox in PostgreSQL, where only a cluster has it (what
/// every backend does is ``CallBackendTests``'): writes and retries notify
/// the leader, rows are claimed once per term, a new term takes over an
/// old one's rows, and an attempt is recorded only by the term holding the row.
@Suite(.serialized, .blocking) struct PostgresWebhookRowsTests {
    static func database() throws -> (ThrowawayPostgres, PostgresConnection, PostgresConnection) {
        let server = try ThrowawayPostgres()
        let connection = try server.migratedConnection(), other = try PostgresConnection(url: server.url)
        return (server, connection, other)
    }

    /// The payloads `connection` hears up to and with `last` (at most 10 s).
    static func heard(on connection: PostgresConnection, until last: String) throws -> [String] {
        var payloads: [String] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while payloads.last != last, ContinuousClock.now < deadline {
            payloads += try connection.notifications(waitingMillis: 500).map(\.payload)
        }
        return payloads
    }

    @Test func insertNotifiesAndClaimsOldestFirstOncePerTerm() throws {
        let (server, connection, leader) = try Self.database()
        defer { server.stop() }
        try leader.execute("LISTEN \(PostgresConnection.webhookChannel)")
        try connection.transaction { () throws(PostgresError) in
            try connection.insert([
                WebhookDelivery.fixture(24), WebhookDelivery.fixture(8, session: "s2"),
                WebhookDelivery.fixture(8, endpoint: "http://b/hook", session: "s2"),
            ])
        }
        try connection.transaction { () throws(PostgresError) in try connection.insert([WebhookDelivery.fixture(16)]) }
        // A rolled-back change leaves no delivery and tells no one.
        _ = try? connection.transaction { () throws(PostgresError) in
            try connection.insert([WebhookDelivery.fixture(32)])
            throw PostgresError(sqlState: nil, message: "the change failed")
        }
        // Notifications come in commit order: what the rollback would have sent comes before this one.
        try connection.execute("SELECT pg_notify($1, 'end')", [PostgresConnection.webhookChannel])
        #expect(try Self.heard(on: leader, until: "end") == ["", "", "end"])

        let first = try leader.claimWebhookDeliveries(term: 7, limit: 3)
        #expect(first.map { "\($0.seq) \($0.endpoint)" } == ["8 http://a/hook", "8 http://b/hook", "16 http://a/hook"])
        #expect(first[0] == WebhookDelivery.fixture(8, session: "s2"), "every field and the body's bytes come back")
        #expect(try leader.claimWebhookDeliveries(term: 7, limit: 10).map(\.seq) == [24])
        #expect(try leader.claimWebhookDeliveries(term: 7, limit: 10).isEmpty, "a term claims a row once")
        // A new leader takes every pending row, whoever held it.
        #expect(try connection.claimWebhookDeliveries(term: 9, limit: 10).map(\.seq) == [8, 8, 16, 24])
    }

    @Test func onlyTheHoldingTermRecordsAnAttemptAndFailedRowsAreRetried() throws {
        let (server, connection, other) = try Self.database()
        defer { server.stop() }
        try connection.insert([WebhookDelivery.fixture(8), WebhookDelivery.fixture(16)])
        _ = try connection.claimWebhookDeliveries(term: 1, limit: 10)
        var failed = WebhookDelivery.fixture(8)
        failed.status = .failed
        failed.attempts = 3
        failed.lastStatus = 500
        failed.lastError = "HTTP 500"
        failed.updatedAt = 5000
        #expect(try connection.saveWebhookAttempt(failed, term: 1))
        _ = try other.claimWebhookDeliveries(term: 2, limit: 10)
        var stale = WebhookDelivery.fixture(16)
        stale.status = .delivered
        #expect(try connection.saveWebhookAttempt(stale, term: 1) == false, "term 2 holds it now")
        #expect(try other.webhookDeliveries(WebhookDeliveryQuery(status: .pending)).deliveries.map(\.seq) == [16])
        #expect(try other.webhookDeliveries(WebhookDeliveryQuery(status: .failed)).deliveries == [failed])

        try other.execute("LISTEN \(PostgresConnection.webhookChannel)")
        let retried = try connection.retryWebhookDeliveries(endpoint: nil, seq: nil, now: 9000)
        #expect(retried.map { "\($0.seq) \($0.status) \($0.attempts) \($0.nextAttemptAt)" } == ["8 pending 0 9000"])
        #expect(try Self.heard(on: other, until: "") == [""], "the retry tells the leader")
        #expect(try other.claimWebhookDeliveries(term: 2, limit: 10).map(\.seq) == [8], "the leader claims it again")
        #expect(
            try connection.retryWebhookDeliveries(endpoint: "http://a/hook", seq: 8, now: 9000).isEmpty,
            "a pending row is not retried")
    }
}
