import CSQLite
import TestSupport
import Testing

@testable import SignalServer

/// The owning SQLite wrappers: statement cache, bindings, columns, errors;
/// and the call log cursor codec.
@Suite(.blocking) struct StoreSQLiteTests {
    private static let base64URLAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    private func withDatabase(_ body: (SQLiteDatabase) throws -> Void) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try body(try SQLiteDatabase(path: directory.databasePath))
    }

    @Test func statementsArePreparedOncePerSQLText() throws {
        try withDatabase { database in
            let first = try database.statement("SELECT 1")
            let second = try database.statement("SELECT 1")
            let other = try database.statement("SELECT 2")
            #expect(first === second)
            #expect(first !== other)
            #expect(database.cachedStatementCount == 2)
        }
    }

    @Test func bindsAndReadsEveryType() throws {
        try withDatabase { database in
            let statement = try database.statement("SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7")
            try statement.bind(Int64.min, at: 1)
            try statement.bind(Int64.max, at: 2)
            try statement.bind("héllo ☎️", at: 3)
            try statement.bind("", at: 4)
            try statement.bind(nil as String?, at: 5)
            try statement.bind(nil as Int64?, at: 6)
            try statement.bind("a\u{0}b", at: 7)
            #expect(try statement.step() == .row)
            #expect(statement.int64(at: 0) == Int64.min)
            #expect(statement.int64(at: 1) == Int64.max)
            #expect(statement.string(at: 2) == "héllo ☎️")
            #expect(statement.string(at: 3) == "")
            #expect(!statement.isNull(at: 3))
            #expect(statement.string(at: 4) == nil)
            #expect(statement.optionalInt64(at: 5) == nil)
            #expect(statement.string(at: 6) == "a\u{0}b")
            #expect(try statement.step() == .done)
        }
    }

    @Test func reuseClearsTheBindings() throws {
        try withDatabase { database in
            let statement = try database.statement("SELECT ?1")
            try statement.bind(7 as Int64, at: 1)
            #expect(try statement.step() == .row)
            let again = try database.statement("SELECT ?1")
            #expect(try again.step() == .row)
            #expect(again.isNull(at: 0))
        }
    }

    @Test func errorsCarryCodesMessageAndSQL() throws {
        try withDatabase { database in
            try database.execute("CREATE TABLE t (k TEXT UNIQUE)")
            let insert = try database.statement("INSERT INTO t (k) VALUES (?1)")
            try insert.bind("x", at: 1)
            try insert.run()
            let duplicate = try database.statement("INSERT INTO t (k) VALUES (?1)")
            try duplicate.bind("x", at: 1)
            let error = try #require(throws: SQLiteError.self) { try duplicate.run() }
            #expect(error.code == "SQLITE_CONSTRAINT")
            #expect(error.resultCode == SQLITE_CONSTRAINT)
            #expect(error.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
            #expect(error.message.contains("UNIQUE"))
            #expect(error.operation == "INSERT INTO t (k) VALUES (?1)")

            let syntax = try #require(throws: SQLiteError.self) { try database.statement("SELEC 1") }
            #expect(syntax.code == "SQLITE_ERROR")
            #expect(syntax.operation == "SELEC 1")
            let empty = try #require(throws: SQLiteError.self) { try database.statement("  ") }
            #expect(empty.code == "SQLITE_MISUSE")
            let exec = try #require(throws: SQLiteError.self) { try database.execute("DROP TABLE missing") }
            #expect(exec.code == "SQLITE_ERROR")
            #expect(exec.message.contains("missing"))
        }
    }

    @Test func openingSomethingThatIsNotADatabaseFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let error = try #require(throws: SQLiteError.self) { try SQLiteDatabase(path: directory.path + "/none/x.db") }
        #expect(error.code == "SQLITE_CANTOPEN")
    }

    @Test func cursorRoundTripsAndRejectsAnythingElse() throws {
        for seq: Int64 in [1, 2, 255, 256, 1 << 40, Int64.max] {
            let cursor = CallLogCursor.encode(seq)
            #expect(cursor.count == 11)
            #expect(Set(cursor).isSubset(of: Self.base64URLAlphabet))
            #expect(try CallLogCursor.decode(cursor) == seq)
        }
        let valid = CallLogCursor.encode(12345)
        let invalid = [
            "", "abc", valid + "A", String(valid.dropLast()), valid + "=", "AAAAAAAAAAA",  // seq 0
            CallLogCursor.encode(-1), "AAAAAAAAAA+", "AAAAAAAAAAB", "!!!!!!!!!!!", "AAAAAAAAAA\u{e9}",
        ]
        for cursor in invalid {
            let error = try #require(throws: StoreError.self) { try CallLogCursor.decode(cursor) }
            #expect(error.code == .badCursor, "\(cursor)")
        }
    }
}
