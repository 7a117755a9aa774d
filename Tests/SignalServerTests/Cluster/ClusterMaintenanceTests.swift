import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// The worker's own failures: due timers each run by one node, timers
/// whose transaction always fails put aside, and a worker that cannot
/// reach the database said on `/readyz`.
@Suite("Cluster: timers claimed once, failing timers quarantined, the worker's health", .blocking)
struct ClusterMaintenanceTests {
    typealias TestCluster = SignalingIntegration.TestCluster

    /// Inserts `count` ring timers for calls that do not exist, due long ago.
    static func insertGhostTimers(_ db: PostgresConnection, prefix: String, count: Int) throws {
        try db.execute(
            """
            INSERT INTO timers (kind, subject, due_at, generation)
            SELECT 'ring', $1 || i, 0, 0 FROM generate_series(1, $2) i
            """, [prefix, String(count)])
    }

    @Test("100 timers whose transaction always fails hold up no other, and are quarantined")
    func failingTimersQuarantined() throws {
        let cluster = try TestCluster(nodes: 2)
        let db = try PostgresConnection(url: cluster.url)
        // Taking these rows fails, as a row the build cannot handle would.
        try db.run(
            script: """
                CREATE FUNCTION poisoned() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'poisoned timer %', OLD.subject; END $$;
                CREATE TRIGGER poisoned BEFORE DELETE ON timers FOR EACH ROW
                WHEN (OLD.subject LIKE 'poison-%') EXECUTE FUNCTION poisoned();
                """)
        try Self.insertGhostTimers(db, prefix: "poison-", count: 100)

        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let placed = try alice.initiate(to: "bob", timeout: 1).call()
        let over = try bob.waitForEvent(placed.sessionId, .unanswered, timeout: 5)
        #expect(over.endReason == .timeout, "\(over) \(cluster.logs)")

        // Each is tried once a lease at most, by one node: three failures take about three leases.
        let quarantined = "SELECT count(*) FROM timers WHERE failed_at IS NOT NULL AND attempts = 3"
        #expect(
            waitUntil(timeout: TestCluster.leaseSeconds * 3 + 10) {
                (try? db.execute(quarantined).int64(0, 0)) == 100
            }, "\(cluster.logs)")
        #expect(cluster.logs.contains("quarantined"))
    }

    @Test("two nodes run one transaction per due timer, not one each")
    func timersRunOnce() throws {
        let cluster = try TestCluster(nodes: 2)
        let db = try PostgresConnection(url: cluster.url)
        let count = 600
        // Every timer transaction takes positions of change_seq before it
        // takes its timer, committed or not: the positions count them.
        let before = try #require(try db.execute("SELECT nextval('change_seq')").int64(0, 0))
        try Self.insertGhostTimers(db, prefix: "ghost-", count: count)
        #expect(
            waitUntil(timeout: 30) { (try? db.execute("SELECT count(*) FROM timers").int64(0, 0)) == 0 },
            "\(cluster.logs)")
        let after = try #require(try db.execute("SELECT nextval('change_seq')").int64(0, 0))
        let transactions = (after - before) / PostgresConnection.positionsPerTransition - 1
        #expect(transactions == Int64(count), "\(transactions) transactions for \(count) timers")
    }

    @Test("/readyz says 503 while the worker cannot connect, with why, and 200 once it can again")
    func workerCannotConnect() throws {
        let cluster = try TestCluster(nodes: 1)
        // From another database: PostgreSQL refuses to close the one a session is on.
        let db = try PostgresConnection(
            url: cluster.url.replacingOccurrences(of: "dbname=postgres", with: "dbname=template1"))
        let listener = try #require(
            try PostgresRows.count(url: cluster.url, "SELECT listener_pid FROM nodes WHERE NOT dead"))
        // New sessions are refused; the listener's goes on, the worker's is ended.
        try db.execute("ALTER DATABASE postgres ALLOW_CONNECTIONS false")
        try db.execute(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = 'postgres' AND backend_type = 'client backend' AND pid <> $1
            """, [String(listener)])
        var refused: SignalingIntegration.RestResponse?
        #expect(
            waitUntil(timeout: 10) {
                refused = try? SignalingIntegration.rest(port: cluster.port(0), "GET", "/readyz")
                return refused?.status == 503
            }, "\(cluster.logs)")
        let reason = refused?.json?["reason"]?.stringValue ?? ""
        #expect(reason.contains("worker cannot connect"), "\(reason)")

        try db.execute("ALTER DATABASE postgres ALLOW_CONNECTIONS true")
        #expect(cluster.becomesReady(0), "\(cluster.logs)")
        let log = cluster.nodes[0].log
        #expect(log.components(separatedBy: "worker cannot connect").count == 2, "logged once: \(log)")
        #expect(log.contains("connected to the database again"), "\(log)")
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        #expect(try alice.request("getActiveCall").ok)
    }
}
