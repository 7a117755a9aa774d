import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// Nodes that connect as different database roles, as with per-node
/// credentials: fencing must find and end another role's session, whose
/// start time PostgreSQL does not show it.
@Suite("Cluster: nodes of different database roles", .blocking)
struct ClusterRoleTests {
    typealias TestCluster = SignalingIntegration.TestCluster

    /// Creates `roles`, able to log in, to use ringd's tables and to end
    /// other roles' sessions (the set-up docs/CLUSTER.md describes).
    static func createRoles(_ roles: [String], on db: PostgresConnection) throws {
        let names = roles.joined(separator: ", ")
        for role in roles { try db.execute("CREATE ROLE \(role) LOGIN") }
        try db.run(
            script: """
                GRANT pg_signal_backend TO \(names);
                GRANT USAGE, CREATE ON SCHEMA public TO \(names);
                GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(names);
                GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO \(names);
                """)
    }

    /// The cluster's URL as `role`.
    static func url(_ cluster: TestCluster, as role: String) -> [String: String] {
        ["RINGD_STORE_URL": cluster.url.replacingOccurrences(of: "user=ringd", with: "user=\(role)")]
    }

    @Test("a frozen node of one role is fenced by a node of another: its listening session is ended")
    func fencedAcrossRoles() throws {
        let cluster = try TestCluster(nodes: 0)
        let db = try cluster.postgres.migratedConnection()
        try Self.createRoles(["node_a", "node_b"], on: db)
        try cluster.addNode(environment: Self.url(cluster, as: "node_a"))
        try cluster.addNode(environment: Self.url(cluster, as: "node_b"))
        let frozen = try #require(
            try db.execute("SELECT listener_pid FROM nodes WHERE NOT dead ORDER BY node_id LIMIT 1").int64(0, 0))
        let role = try db.execute("SELECT usename FROM pg_stat_activity WHERE pid = $1", [String(frozen)])
        #expect(role.string(0, 0) == "node_a")
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")

        cluster.nodes[0].signal(SIGSTOP)
        defer { cluster.nodes[0].signal(SIGCONT) }
        #expect(
            waitUntil(timeout: TestCluster.leaseSeconds * 2 + 5) {
                (try? db.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [String(frozen)]).int64(0, 0))
                    == 0
            }, "node_b did not end node_a's listening session: \(cluster.logs)")
        cluster.nodes[0].signal(SIGCONT)
        #expect(try alice.nextClose(timeout: 10) == .goingAway, "\(cluster.logs)")
        #expect(!cluster.logs.contains("may not end"), "\(cluster.logs)")
    }

    @Test("a node whose role may not end another role's sessions says so at start")
    func fencingRoleChecked() throws {
        let cluster = try TestCluster(nodes: 0)
        let db = try cluster.postgres.migratedConnection()
        try Self.createRoles(["node_a", "node_c"], on: db)
        try db.execute("REVOKE pg_signal_backend FROM node_c")
        try cluster.addNode(environment: Self.url(cluster, as: "node_a"))
        try cluster.addNode(environment: Self.url(cluster, as: "node_c"))
        #expect(cluster.nodes[1].log.contains("cluster nodes run as node_a, whose sessions"), "\(cluster.logs)")
        #expect(!cluster.nodes[0].log.contains("whose sessions"), "\(cluster.logs)")
    }

    @Test("push tokens a node cannot read after a notification make it attach again, and then read them all")
    func unreadableTokensReattach() throws {
        let cluster = try TestCluster(nodes: 1)
        let db = try cluster.postgres.migratedConnection()
        try Self.createRoles(["node_b"], on: db)
        try cluster.addNode(environment: Self.url(cluster, as: "node_b"))
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        try db.execute("REVOKE SELECT ON push_tokens FROM node_b")
        let registered = try SignalingIntegration.rest(
            port: cluster.port(0), "PUT", "/v1/users/erin/devices/watch/push-token",
            body: #"{"platform":"fcm","token":"\#(RingdPushRig.pixelToken)"}"#)
        #expect(registered.status == 200, "\(registered)")
        // Node 1 heard that erin's tokens changed and cannot read them: it
        // attaches again (dropping its clients) rather than keep stale ones.
        #expect(try bob.nextClose(timeout: 5) == .goingAway, "\(cluster.logs)")
        try db.execute("GRANT SELECT ON push_tokens TO node_b")
        #expect(
            waitUntil(timeout: 15) { ClusterPushTests.devices(of: "erin", on: 1, cluster) == ["watch"] },
            "\(String(describing: ClusterPushTests.devices(of: "erin", on: 1, cluster))) \(cluster.logs)")
    }
}
