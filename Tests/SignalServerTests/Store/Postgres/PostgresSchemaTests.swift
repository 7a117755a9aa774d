import Testing

@testable import SignalServer

/// The PostgreSQL schema: nodes starting together migrate once, and a
/// second migration changes nothing.
@Suite(.serialized) struct PostgresSchemaTests {
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
}
