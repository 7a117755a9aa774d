import Testing

@testable import SignalServer

/// Revocations in PostgreSQL only move forward, as in SQLite: a later time
/// replaces the stored one, an earlier one changes nothing, and another
/// connection (node) reads what was saved.
@Suite(.serialized) struct PostgresRevocationRowsTests {
    @Test func revocationsKeepTheLaterTime() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection(), other = try PostgresConnection(url: server.url)
        #expect(try connection.revocations().isEmpty)

        try connection.saveRevocation(uid: "alice", revokedAt: 1000)
        try connection.saveRevocation(uid: "bob", revokedAt: 2000)
        try other.saveRevocation(uid: "alice", revokedAt: 500)
        try connection.saveRevocation(uid: "o'neil \"x\"", revokedAt: Int64.max)
        #expect(try other.revocations() == ["alice": 1000, "bob": 2000, "o'neil \"x\"": Int64.max])
        try other.saveRevocation(uid: "alice", revokedAt: 3000)
        try connection.saveRevocation(uid: "bob", revokedAt: 2000)
        #expect(try connection.revocations() == ["alice": 3000, "bob": 2000, "o'neil \"x\"": Int64.max])
    }
}
