import Foundation
import TestSupport
import Testing

@testable import SignalServer

/// The cluster's store epoch (docs/CLUSTER.md, "Failover"): the schema's
/// random id, the system identifier and the timeline the server writes on,
/// read once per session; a role not allowed `pg_control_system()` gets
/// the server's start time in their place.
@Suite(.serialized, .blocking) struct PostgresEpochTests {
    @Test func theEpochNamesTheStoreTheClusterAndItsTimelineAndChangesWithTheTimeline() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let before = try server.migratedConnection()
        let epoch = try before.storeEpoch()
        let system = try before.execute("SELECT system_identifier::text FROM pg_control_system()").string(0, 0)
        let storeId = try before.execute("SELECT value FROM cluster_settings WHERE name = 'store_id'").string(0, 0)
        #expect(epoch == "\(storeId ?? "?").\(system ?? "?").1")
        #expect(try PostgresConnection(url: server.url).storeEpoch() == epoch, "every session reads the same")

        try server.nextTimeline()
        let after = try PostgresConnection(url: server.url)
        #expect(try after.storeEpoch() == "\(storeId ?? "?").\(system ?? "?").2", "a promoted replica's is another")
        #expect(try before.storeEpoch() == epoch, "a session keeps the epoch it read (a failover ends it)")

        let other = try ThrowawayPostgres()
        defer { other.stop() }
        #expect(try other.migratedConnection().storeEpoch() != epoch)
    }

    @Test func aRoleNotAllowedTheControlFunctionsGetsTheServersStartTime() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let owner = try server.migratedConnection()
        try owner.run(
            script: """
                CREATE ROLE node_b LOGIN;
                GRANT SELECT ON cluster_settings TO node_b;
                REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC;
                """)
        let restricted = try PostgresConnection(
            url: server.url.replacingOccurrences(of: "user=ringd", with: "user=node_b"))
        let started = try owner.execute("SELECT (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint")
            .string(0, 0)
        let storeId = try owner.execute("SELECT value FROM cluster_settings WHERE name = 'store_id'").string(0, 0)
        #expect(try restricted.storeEpoch() == "\(storeId ?? "?").started.\(started ?? "?")")
    }
}
