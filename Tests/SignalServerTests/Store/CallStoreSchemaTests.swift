import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// Opening, migrating, reopening and closing the store's database file.
@Suite(.blocking) struct CallStoreSchemaTests {
    /// The names of the tables and indexes in the database at `path`.
    private func schemaNames(_ path: String) throws -> Set<String> {
        let database = try SQLiteDatabase(path: path)
        return Set(
            try database.fetchAll("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')") { $0.string(0) })
    }

    /// The opcodes SQLite's program for `sql` runs.
    private func opcodes(_ sql: String, in database: SQLiteDatabase) throws -> [String] {
        try database.fetchAll("EXPLAIN " + sql) { $0.string(1) }
    }

    @Test("writing a call builds no temporary b-tree (the partial indexes' conditions need none)")
    func savesUseNoTemporaryTable() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.path + "/calls.db")
        store.close()
        let database = try SQLiteDatabase(path: directory.path + "/calls.db")
        for sql in [
            "UPDATE calls SET status = ?1, ended_at = ?2 WHERE session_id = ?3",
            "INSERT INTO calls (session_id, call_type, status, initiator, receiver, initiated_at, timeout) "
                + "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        ] {
            let program = try opcodes(sql, in: database)
            #expect(program.contains("OpenWrite") && !program.contains("OpenEphemeral"), "\(sql): \(program)")
        }
    }

    @Test func createsDirectoryAndSchemaInWALMode() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/nested/deeper/calls.db"
        let store = try CallStore(path: path)
        try store.saveAndWait([storedCall(1)])
        store.close()

        let database = try SQLiteDatabase(path: path)
        #expect(try database.scalarInt64("PRAGMA user_version") == StoreSchema.latestVersion)
        #expect(StoreSchema.latestVersion == 14)
        #expect(try database.scalarText("PRAGMA journal_mode") == "wal")
        let names = try schemaNames(path)
        for name in [
            "calls", "revocations", "calls_live", "calls_by_initiator", "calls_by_receiver", "calls_between",
            "calls_missed", "counters", "restart_grace", "webhook_deliveries", "webhook_deliveries_by_status",
        ] {
            #expect(names.contains(name), "\(name)")
        }
        #expect(!names.contains("call_log"))
    }

    /// ``CallStore/inMemoryPath`` is a whole store at the latest schema with
    /// no file behind it (no log, no checkpointer), and each one opened is
    /// a database of its own.
    @Test func anInMemoryStoreHasTheLatestSchemaAndNoFile() throws {
        let first = try CallStore(path: CallStore.inMemoryPath)
        defer { first.close() }
        let second = try CallStore(path: CallStore.inMemoryPath)
        defer { second.close() }
        let (version, journal, names) = try first.wait(writes: false) { connection throws(StoreError) in
            (
                try connection.database.scalarInt64("PRAGMA user_version"),
                try connection.database.scalarText("PRAGMA journal_mode"),
                Set(try connection.database.fetchAll("SELECT name FROM sqlite_master") { $0.string(0) })
            )
        }
        #expect(version == StoreSchema.latestVersion && journal == "memory")
        #expect(names.isSuperset(of: ["calls", "calls_live", "counters", "webhook_deliveries", "push_tokens"]))
        for index in 1 ... 50 { try first.saveAndWait([storedCall(index)]) }
        #expect(try first.fetch("session-50") == storedCall(50))
        #expect(try second.fetch("session-1") == nil)
        #expect(first.checkpointCount == 0)
        #expect(
            !FileManager.default.fileExists(atPath: CallStore.inMemoryPath),
            "a file named :memory: in \(FileManager.default.currentDirectoryPath)")
    }

    @Test func reopeningKeepsDataAndVersion() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try CallStore(path: directory.databasePath)
        try first.saveAndWait([storedCall(1), storedCall(2, "carol", "alice")])
        first.close()

        let second = try CallStore(path: directory.databasePath)
        defer { second.close() }
        #expect(try second.fetch("session-1") == storedCall(1))
        #expect(try second.logs("alice").logs.map(\.call.sessionId) == ["session-2", "session-1"])
        try second.saveAndWait([storedCall(3)])
        #expect(try second.logs("alice").logs.count == 3)
    }

    /// A file written by a version 1 build (calls plus call_log rows) keeps
    /// every call and its histories after the migration to version 2.
    @Test func aVersion1FileKeepsItsHistories() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let old = try SQLiteDatabase(path: directory.databasePath)
        try old.executeScript("PRAGMA journal_mode = WAL")
        try old.executeScript(StoreSchema.migrations[0].sql)
        try old.executeScript("PRAGMA user_version = 1")
        try old.executeScript(
            """
            INSERT INTO calls (session_id, call_type, status, initiator, receiver, initiated_at, ended_at, ended_by,
                               end_reason, timeout)
            VALUES ('session-1', 'audio', 'unanswered', 'alice', 'bob', 1000, 31000, NULL, 'timeout', 30);
            INSERT INTO call_log VALUES ('alice', 1, 'outgoing', 'bob', 'audio', 'unanswered', 0),
                                        ('bob', 1, 'incoming', 'alice', 'audio', 'unanswered', 1);
            """)

        let store = try CallStore(path: directory.databasePath)
        defer { store.close() }
        let call = try #require(try store.fetch("session-1"))
        #expect(try store.logs("alice").logs == [CallLog(call: call, direction: .outgoing, missed: false)])
        #expect(
            try store.logs("bob", CallLogFilter(missedOnly: true)).logs == [
                CallLog(call: call, direction: .incoming, missed: true)
            ])
        #expect(
            try SQLiteDatabase(path: directory.databasePath).scalarInt64("PRAGMA user_version")
                == StoreSchema.latestVersion)
        // Version 3 reads the calls already there as changed before any
        // position, and hands out positions above their seq.
        #expect(call.seq == 0)
        #expect(try store.loadContinuity().lastSeq == 1)
        // Version 6 reads their ring timeout as the whole seconds they had.
        #expect(call.timeoutMs == 30_000)
    }

    /// A store file as a build of schema `version` left it, migrated no further.
    static func file(atVersion version: Int64, in directory: TemporaryDirectory) throws -> SQLiteDatabase {
        let old = try SQLiteDatabase(path: directory.databasePath)
        try old.executeScript("PRAGMA journal_mode = WAL")
        for migration in StoreSchema.migrations.prefix(while: { $0.version <= version }) {
            try old.executeScript(migration.sql)
        }
        try old.executeScript("PRAGMA user_version = \(version)")
        return old
    }

    /// Version 6 keeps the ring timeout to the millisecond: a call saved
    /// before it rang for its `timeout` seconds; one saved since keeps its
    /// milliseconds, and the seconds column its whole seconds rounded up.
    @Test func aVersion5FileKeepsItsTimeoutsAndNewCallsKeepMilliseconds() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let old = try Self.file(atVersion: 5, in: directory)
        try old.executeScript(
            """
            INSERT INTO calls (session_id, call_type, status, initiator, receiver, initiated_at, timeout, change_seq, seq)
            VALUES ('rang-before', 'audio', 'initiated', 'alice', 'bob', 1000, 20, 7, 7);
            """)

        let store = try CallStore(path: directory.databasePath)
        defer { store.close() }
        let before = try #require(try store.fetch("rang-before"))
        #expect(before.timeoutMs == 20_000 && before.ringDeadline == 21_000)
        var short = storedCall(2, status: .initiated)
        short.timeoutMs = 200
        try store.saveAndWait([short])
        #expect(try store.fetch(short.sessionId)?.timeoutMs == 200)
        #expect(try store.loadLiveCalls().map(\.timeoutMs) == [20_000, 200])
        let raw = try SQLiteDatabase(path: directory.databasePath)
        #expect(try raw.scalarInt64("SELECT timeout FROM calls WHERE session_id = 'session-2'") == 1)
        #expect(try raw.scalarInt64("SELECT timeout_ms FROM calls WHERE session_id = 'rang-before'") == nil)
    }

    /// Version 8 records the device that placed a call: a call of a
    /// version 7 file reads without one; calls saved since keep theirs,
    /// through updates and in the history.
    @Test func aVersion7FileGainsTheInitiatorsDevice() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let old = try Self.file(atVersion: 7, in: directory)
        try old.executeScript(
            """
            INSERT INTO calls (session_id, call_type, status, initiator, receiver, initiated_at, timeout, timeout_ms,
                               accepted_at, accepted_by, change_seq, seq)
            VALUES ('placed-before', 'video', 'ongoing', 'alice', 'bob', 1000, 45, 45000, 2000, 'b1', 7, 7);
            """)

        let store = try CallStore(path: directory.databasePath)
        defer { store.close() }
        let before = try #require(try store.fetch("placed-before"))
        #expect(before.initiatorDevice == nil && before.acceptedBy == "b1")
        var call = storedCall(2, status: .initiated)
        call.initiatorDevice = "alice-laptop"
        try store.saveAndWait([call])
        call.status = .ongoing
        call.acceptedAt = call.initiatedAt + 100
        call.acceptedBy = "bob-phone"
        try store.saveAndWait([call])
        #expect(try store.fetch(call.sessionId) == call)
        #expect(
            try store.logs("alice").logs.first { $0.call.sessionId == call.sessionId }?.call.initiatorDevice
                == "alice-laptop")
    }

    /// The log is copied back by the checkpointer thread once it holds
    /// ``StoreCheckpointer/thresholdFrames`` frames; the data stays readable
    /// from another connection throughout.
    @Test func theCheckpointerCopiesTheLogBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath)
        defer { store.close() }
        #expect(store.checkpointCount == 0)
        var saved = 0
        while store.checkpointCount == 0, saved < 5000 {
            saved += 1
            try store.saveAndWait([storedCall(saved)])
        }
        #expect(
            waitUntil(timeout: storeTestTimeout) { store.checkpointCount > 0 }, "no checkpoint after \(saved) commits")
        let raw = try SQLiteDatabase(path: directory.databasePath)
        #expect(try raw.scalarInt64("SELECT count(*) FROM calls") == Int64(saved))
    }

    /// Commits one after another never let the log grow far past what the
    /// writer's catch-up allows: SQLite starts it over once all of it was
    /// copied back. A catch-up can miss while the checkpointer reads the
    /// log, hence twice the catch-up size as the bound. (Without the
    /// catch-up, 2,000 saves left about 53 MB in it.)
    @Test func theLogStaysBoundedUnderSteadyCommits() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath)
        defer { store.close() }
        for index in 1 ... 2000 { try store.saveAndWait([storedCall(index)]) }
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.databasePath + "-wal")
        let bytes = try #require(attributes[.size] as? Int)
        let bound = 32 + 2 * Int(StoreCheckpointer.catchUpFrames) * (4096 + 24)
        #expect(bytes <= bound, "the log holds \(bytes) bytes")
    }

    @Test func synchronousFullOpensAndSaves() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath, synchronousFull: true)
        defer { store.close() }
        try store.saveAndWait([storedCall(1)])
        #expect(try store.fetch("session-1") == storedCall(1))
    }

    @Test func refusesASchemaFromANewerVersion() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try CallStore(path: directory.databasePath).close()
        try SQLiteDatabase(path: directory.databasePath).executeScript("PRAGMA user_version = 99")
        let error = try #require(throws: StoreError.self) { try CallStore(path: directory.databasePath) }
        #expect(error.code == .schemaTooNew)
    }

    @Test func reportsAFileThatIsNotADatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: directory.databasePath))
        let error = try #require(throws: StoreError.self) { try CallStore(path: directory.databasePath) }
        #expect(error.code == .database)
        #expect(error.message.contains("SQLITE_NOTADB"))
    }

    @Test func reportsADirectoryPathBlockedByAFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory.path + "/file"))
        let nested = try #require(throws: StoreError.self) {
            try CallStore(path: directory.path + "/file/sub/calls.db")
        }
        #expect(nested.code == .directory)
        let direct = try #require(throws: StoreError.self) { try CallStore(path: directory.path + "/file/calls.db") }
        #expect(direct.code == .directory)
    }

    @Test func revocationsPersistAndOnlyMoveForward() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try CallStore(path: directory.databasePath)
        #expect(try first.loadRevocations().isEmpty)
        try waitForResult { first.saveRevocation(uid: "alice", revokedAt: 1000, completion: $0) }.get()
        try waitForResult { first.saveRevocation(uid: "bob", revokedAt: 2000, completion: $0) }.get()
        try waitForResult { first.saveRevocation(uid: "alice", revokedAt: 500, completion: $0) }.get()
        #expect(try first.loadRevocations() == ["alice": 1000, "bob": 2000])
        first.close()

        let second = try CallStore(path: directory.databasePath)
        defer { second.close() }
        #expect(try second.loadRevocations() == ["alice": 1000, "bob": 2000])
        try waitForResult { second.saveRevocation(uid: "alice", revokedAt: 3000, completion: $0) }.get()
        #expect(try second.loadRevocations() == ["alice": 3000, "bob": 2000])
    }

    /// A completion means committed: another connection (as another process
    /// after a crash would) sees the data while the store is still open and
    /// was never closed.
    @Test func committedDataIsInTheFileWithoutClose() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath)
        defer { store.close() }
        try store.saveAndWait([storedCall(1)])
        try waitForResult { store.saveRevocation(uid: "alice", revokedAt: 42, completion: $0) }.get()
        #expect(directory.contains("calls.db-wal"))

        let other = try CallStore(path: directory.databasePath)
        defer { other.close() }
        #expect(try other.fetch("session-1") == storedCall(1))
        #expect(try other.loadRevocations() == ["alice": 42])
        let raw = try SQLiteDatabase(path: directory.databasePath)
        #expect(try raw.scalarInt64("SELECT count(*) FROM calls") == 1)
    }

    @Test func closeCheckpointsAndIsIdempotent() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath)
        try store.saveAndWait([storedCall(1)])
        #expect(directory.contains("calls.db-wal"))
        store.close()
        store.close()
        // The last connection to close checkpoints the WAL and deletes it.
        #expect(!directory.contains("calls.db-wal"))
        let refused = try waitForResult { store.save([storedCall(2)], completion: $0) }
        #expect(throws: StoreError(.closed, "the call store is closed")) { try refused.get() }
        #expect(throws: StoreError.self) { try store.loadRevocations() }
        store.flush()
    }

    @Test func releasingTheStoreStopsTheThreadAndClosesTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try CallStore(path: directory.databasePath)
            try store.saveAndWait([storedCall(1)])
            #expect(directory.contains("calls.db-wal"))
        }
        #expect(!directory.contains("calls.db-wal"))
        let reopened = try CallStore(path: directory.databasePath)
        defer { reopened.close() }
        #expect(try reopened.fetch("session-1") == storedCall(1))
    }
}
