import CSQLite
import TestSupport
import Testing

@testable import SignalServer

/// The owning SQLite wrappers and their one row-fetch path: statement
/// cache, bindings, columns, errors; and the call log cursor codec.
@Suite(.blocking) struct StoreSQLiteTests {
    private static let base64URLAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    private func withDatabase(_ body: (SQLiteDatabase) throws -> Void) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try body(try SQLiteDatabase(path: directory.databasePath))
    }

    @Test func statementsArePreparedOncePerSQLText() throws {
        try withDatabase { database in
            #expect(try database.fetchOne("SELECT 1") { $0.int64(0) } == 1)
            #expect(try database.fetchOne("SELECT 1") { $0.int64(0) } == 1)
            #expect(try database.fetchAll("SELECT 2") { $0.int64(0) } == [2])
            #expect(database.cachedStatementCount == 2)
            try database.executeScript("SELECT 3; SELECT 4")
            #expect(database.cachedStatementCount == 2, "scripts are not cached")
        }
    }

    @Test func bindsAndReadsEveryType() throws {
        try withDatabase { database in
            let read = try database.fetchOne(
                "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9", Int64.min, Int64.max, "héllo ☎️", "", nil as String?,
                nil as Int64?, "a\u{0}b", 42, Int64?(7)
            ) { row in
                #expect(row.int64(0) == Int64.min)
                #expect(row.int64(1) == Int64.max)
                #expect(row.string(2) == "héllo ☎️")
                #expect(row.optionalString(3) == "")
                #expect(!row.isNull(3))
                #expect(row.optionalString(4) == nil && row.string(4) == "" && row.isNull(4))
                #expect(row.optionalInt64(5) == nil && row.int64(5) == 0)
                #expect(row.string(6) == "a\u{0}b")
                #expect(row.int64(7) == 42)
                #expect(row.optionalInt64(8) == 7)
                return true
            }
            #expect(read == true)
            #expect(try database.fetchOne("SELECT 1 WHERE 0") { $0.int64(0) } == nil)
        }
    }

    @Test func reuseClearsTheBindings() throws {
        try withDatabase { database in
            let bound = try database.fetchOne("SELECT ?1", 7) { $0.optionalInt64(0) }
            #expect(bound == 7)
            let again = try database.fetchOne("SELECT ?1") { $0.isNull(0) }
            #expect(again == true)
        }
    }

    @Test func executeCountsChangesAndRowsStopWhenAsked() throws {
        try withDatabase { database in
            try database.executeScript("CREATE TABLE t (k INTEGER)")
            for k in 1 ... 5 { #expect(try database.execute("INSERT INTO t (k) VALUES (?1)", k) == 1) }
            #expect(try database.execute("UPDATE t SET k = k WHERE k > ?1", 2) == 3)
            var seen: [Int64] = []
            try database.forEachRow("SELECT k FROM t ORDER BY k") { row in
                seen.append(row.int64(0))
                return seen.count < 2
            }
            #expect(seen == [1, 2])
            #expect(try database.fetchAll("SELECT k FROM t ORDER BY k") { $0.int64(0) } == [1, 2, 3, 4, 5])
        }
    }

    @Test func errorsCarryCodesMessageAndSQL() throws {
        try withDatabase { database in
            try database.executeScript("CREATE TABLE t (k TEXT UNIQUE)")
            let insert = "INSERT INTO t (k) VALUES (?1)"
            try database.execute(insert, "x")
            let error = try #require(throws: StoreError.self) { try database.execute(insert, "x") }
            let sqlite = try #require(error.sqlite)
            #expect(error.code == .database)
            #expect(sqlite.code == "SQLITE_CONSTRAINT")
            #expect(sqlite.resultCode == SQLITE_CONSTRAINT)
            #expect(sqlite.extendedCode == SQLiteError.constraintUnique)
            #expect(sqlite.message.contains("UNIQUE"))
            #expect(sqlite.operation == insert)
            #expect(error.message == "SQLITE_CONSTRAINT (19/2067): \(sqlite.message); in \(insert)")

            let syntax = try #require(throws: StoreError.self) { try database.execute("SELEC 1") }
            #expect(syntax.sqlite?.code == "SQLITE_ERROR" && syntax.sqlite?.operation == "SELEC 1")
            let empty = try #require(throws: StoreError.self) { try database.execute("  ") }
            #expect(empty.sqlite?.code == "SQLITE_MISUSE")
            let exec = try #require(throws: StoreError.self) { try database.executeScript("DROP TABLE missing") }
            #expect(exec.sqlite?.code == "SQLITE_ERROR" && exec.message.contains("missing"))
            let range = try #require(throws: StoreError.self) { try database.execute("SELECT ?1", 1, 2) }
            #expect(range.sqlite?.code == "SQLITE_RANGE" && range.message.contains("bind integer ?2 of SELECT ?1"))
        }
    }

    @Test func aNullPastTheLastParameterIsDropped() throws {
        try withDatabase { database in
            let value = try database.fetchOne("SELECT ?1", 5, nil as String?, nil as Int64?) { $0.int64(0) }
            #expect(value == 5)
        }
    }

    @Test func severalStatementsAreRefusedNotSkipped() throws {
        try withDatabase { database in
            try database.executeScript("CREATE TABLE t (k INTEGER)")
            let error = try #require(throws: StoreError.self) {
                try database.execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
            }
            #expect(error.sqlite?.code == "SQLITE_MISUSE" && error.message.contains("more than one statement"))
            #expect(try database.scalarInt64("SELECT count(*) FROM t") == 0)
            #expect(try database.execute("INSERT INTO t VALUES (1);  \n") == 1, "a trailing semicolon is one statement")
        }
    }

    @Test func aMessageQuotesLongSQLShortenedAndTheErrorKeepsItWhole() throws {
        try withDatabase { database in
            let sql =
                "SELECT\n    " + (1 ... 100).map { "\($0) AS c\($0)" }.joined(separator: ",\n    ") + " FROM nowhere"
            let error = try #require(throws: StoreError.self) { try database.execute(sql) }
            #expect(error.sqlite?.operation == sql)
            let quoted = try #require(error.message.split(separator: "; in ").last)
            #expect(quoted.hasPrefix("SELECT 1 AS c1, 2 AS c2"))
            #expect(quoted.hasSuffix("…") && quoted.count == SQLiteError.quotedSQLLimit + 1)
        }
    }

    /// A failed step, a failed bind and a failing decoder each leave the
    /// cached statement ready for the next use, read from the first row.
    @Test func aStatementIsReusedAfterAnError() throws {
        try withDatabase { database in
            try database.executeScript("CREATE TABLE t (k TEXT UNIQUE); INSERT INTO t VALUES ('a'), ('b')")
            let insert = "INSERT INTO t (k) VALUES (?1)"
            #expect(throws: StoreError.self) { try database.execute(insert, "a") }
            #expect(try database.execute(insert, "c") == 1)
            #expect(throws: StoreError.self) { try database.execute(insert, "d", "extra") }
            #expect(try database.execute(insert, "d") == 1)

            let select = "SELECT k FROM t ORDER BY k"
            let failure = try #require(throws: StoreError.self) {
                try database.fetchAll(select) { row throws(StoreError) in
                    guard row.string(0) != "b" else { throw StoreError(.corruptRow, "b") }
                    return row.string(0)
                }
            }
            #expect(failure.code == .corruptRow && failure.sqlite == nil)
            #expect(try database.fetchAll(select) { $0.string(0) } == ["a", "b", "c", "d"])
            #expect(database.cachedStatementCount == 2)
        }
    }

    @Test func openingSomethingThatIsNotADatabaseFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let error = try #require(throws: StoreError.self) { try SQLiteDatabase(path: directory.path + "/none/x.db") }
        #expect(error.code == .database && error.sqlite?.code == "SQLITE_CANTOPEN")
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
