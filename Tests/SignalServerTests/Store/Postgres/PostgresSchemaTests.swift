import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

/// The PostgreSQL schema: nodes starting together migrate once, and a
/// second migration changes nothing.
@Suite(.serialized, .blocking) struct PostgresSchemaTests {
    @Test func migratesOnce() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let first = try PostgresConnection(url: server.url), second = try PostgresConnection(url: server.url)
        try PostgresSchema.migrate(first)
        try PostgresSchema.migrate(second)
        #expect(
            try first.execute("SELECT count(*) FROM ringd_schema").int64(0, 0)
                == Int64(PostgresSchema.migrations.count), "each migration once")
        #expect(
            try first.execute("SELECT max(version) FROM ringd_schema").int64(0, 0)
                == Int64(PostgresSchema.latestVersion))
        #expect(
            try first.execute(
                "SELECT count(*) FROM pg_tables WHERE tablename IN ('calls', 'nodes', 'presence', 'timers', 'users')"
            )
            .int64(0, 0) == 5)
    }

    /// The generated token secret mints any user's token: a role that
    /// default privileges give every table (a reporting role) does not get
    /// it, and the nodes' role does.
    @Test func theTokenSecretIsNotReadableByEveryRole() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let owner = try PostgresConnection(url: server.url)
        try owner.run(
            script: """
                ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO PUBLIC;
                CREATE ROLE reporter LOGIN;
                """)
        try PostgresSchema.migrate(owner)
        let secret = try owner.sharedTokenSecret(proposing: Array(repeating: 7, count: 32))
        #expect(secret == Array(repeating: 7, count: 32))
        #expect(try owner.sharedTokenSecret(proposing: Array(repeating: 9, count: 32)) == secret, "one for all")

        let reporter = try PostgresConnection(
            url: server.url.replacingOccurrences(of: "user=ringd", with: "user=reporter"))
        #expect(try reporter.execute("SELECT count(*) FROM calls").int64(0, 0) == 0, "it reads what it was given")
        #expect(
            try reporter.execute("SELECT count(*) FROM cluster_settings WHERE value = $1", [TokenSecret.hex(secret)])
                .int64(0, 0) == 0)
        #expect(throws: PostgresError.self) { try reporter.execute("SELECT value FROM cluster_secrets") }
    }

    /// A database whose secret a node generated before the secrets had a
    /// table of their own keeps it: the migration moves it there.
    @Test func anUpgradeMovesTheGeneratedSecret() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        let secrets = try #require(
            PostgresSchema.migrations.first { $0.sql.contains("CREATE TABLE cluster_secrets") }?.version)
        // As a node of the schema before that migration left it.
        try db.run(
            script: """
                DROP TABLE cluster_secrets;
                INSERT INTO cluster_settings (name, value) VALUES ('token_secret', 'c0ffee');
                DELETE FROM ringd_schema WHERE version >= \(secrets);
                """)
        try PostgresSchema.migrate(db)
        #expect(try db.sharedTokenSecret(proposing: [1, 2, 3]) == [0xC0, 0xFF, 0xEE])
        #expect(try db.execute("SELECT count(*) FROM cluster_settings WHERE name = 'token_secret'").int64(0, 0) == 0)
    }

    /// Nothing of the schema, the version table included, is made before
    /// the migration lock is held: nodes starting together would otherwise
    /// create it at once, and one could fail in the catalog.
    @Test func theVersionTableIsMadeUnderTheMigrationLock() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let holder = try PostgresConnection(url: server.url), observer = try PostgresConnection(url: server.url)
        try holder.execute("BEGIN")
        try holder.execute("SELECT pg_advisory_xact_lock($1)", [String(PostgresSchema.migrationLock)])
        final class Outcome: Sendable {
            let failure = Mutex<String?>(nil)
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome(), url = server.url
        Thread {
            do {
                try PostgresSchema.migrate(try PostgresConnection(url: url))
            } catch {
                outcome.failure.withLock { $0 = "\(error)" }
            }
            outcome.done.signal()
        }.start()
        #expect(
            waitUntil(timeout: 10) {
                (try? observer.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))?
                    .int64(0, 0) == 1
            }, "the migration waits for the lock")
        #expect(try observer.execute("SELECT to_regclass('ringd_schema') IS NULL").string(0, 0) == "t")
        try holder.execute("COMMIT")
        #expect(outcome.done.wait(timeout: .now() + 30) == .success)
        #expect(outcome.failure.withLock { $0 } == nil)
        #expect(
            try observer.execute("SELECT max(version) FROM ringd_schema").int64(0, 0)
                == Int64(PostgresSchema.latestVersion))
    }
}
