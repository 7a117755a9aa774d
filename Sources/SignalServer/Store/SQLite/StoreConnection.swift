import CSQLite
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The store's database as the writer uses it: the connection, the
/// transaction statements the group commit needs, and the revocation table.
/// Calls and call logs are in extensions. Used by one thread at a time, the
/// holder of ``StoreRunner``'s lock, like the ``SQLiteDatabase`` it owns.
final class StoreConnection {
    /// The open, migrated database.
    let database: SQLiteDatabase
    /// Whether the database lives in memory (no log, no other connection).
    private let inMemory: Bool
    /// The log's index, found on the first commit of a loop (nil in memory).
    private var walIndex: WALIndex?

    /// The mode of the store's files (database, -wal, -shm, lock) and of its
    /// directory when ringd creates them: they hold every user's calls and
    /// push tokens, and the directory the token secret, so the owner's only.
    static let fileMode: mode_t = 0o600
    static let directoryMode: mode_t = 0o700

    /// Creates the file's directory if missing, opens (creating) the database
    /// and brings it up to date (see ``StoreSchema/prepare(_:synchronousFull:)``).
    /// At ``CallStore/inMemoryPath`` it touches no file: the database lives
    /// in this connection's memory and goes with it.
    init(path: String, synchronousFull: Bool) throws(StoreError) {
        inMemory = path == CallStore.inMemoryPath
        if !inMemory {
            do throws(SystemError) {
                try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path), mode: Self.directoryMode)
            } catch {
                throw StoreError(.directory, "cannot create the directory of \(path): \(error)")
            }
            try Self.createIfMissing(path)
        }
        database = try SQLiteDatabase(path: path)
        if inMemory {
            try StoreSchema.prepareInMemory(database)
        } else {
            try StoreSchema.prepare(database, synchronousFull: synchronousFull)
        }
    }

    /// Opens the existing store at `path` only for reading (to copy it, see
    /// ``StoreMigrator``). Nothing may migrate it then, so it must have
    /// this build's schema: the queries read the columns of that version.
    init(readingOnly path: String) throws(StoreError) {
        database = try SQLiteDatabase(path: path, readOnly: true)
        inMemory = false
        database.setBusyTimeout(milliseconds: StoreSchema.busyTimeoutMilliseconds)
        let version = try database.scalarInt64("PRAGMA user_version") ?? 0
        let latest = StoreSchema.latestVersion
        guard version <= latest else {
            throw StoreError(
                .schemaTooNew,
                "\(path) has schema version \(version); this build knows up to \(latest): "
                    + "use the ringd that wrote it")
        }
        guard version == latest else {
            throw StoreError(
                .database,
                version == 0
                    ? "\(path) is not a ringd store (it has no schema version)"
                    : "\(path) has schema version \(version), older than this build's \(latest): start this build's ringd "
                        + "on it once (a start brings the store up to date), stop it, then try again")
        }
    }

    /// Creates the database file, empty (SQLite takes that for an empty
    /// database), with ``fileMode`` if it does not exist. SQLite would create
    /// it 0644 less the umask; the -wal, -shm and -journal files it makes
    /// later get the database file's mode (its unix VFS copies it), so this
    /// one file sets them all. An existing file keeps its mode.
    private static func createIfMissing(_ path: String) throws(StoreError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        if fd >= 0 {
            close(fd)
            return
        }
        let code = errno
        guard code == EEXIST else {
            throw StoreError(.directory, "cannot create \(path): \(SystemError(call: "open", code: code))")
        }
    }

    /// Starts a write transaction, taking the write lock at once so the
    /// commit cannot fail for want of it.
    func begin() throws(StoreError) { try database.execute("BEGIN IMMEDIATE") }

    /// Whether statements wait up to the busy timeout for another
    /// connection's lock (on the writer thread) or fail with `SQLITE_BUSY`
    /// at once (on an event loop, which must never wait).
    var waitsForLocks = true {
        didSet {
            guard waitsForLocks != oldValue else { return }
            database.setBusyTimeout(milliseconds: waitsForLocks ? StoreSchema.busyTimeoutMilliseconds : 0)
        }
    }

    /// For an event loop: ``begin()``, unless the transaction could wait,
    /// then false, with none open: another connection (another process)
    /// holds the write lock, or the transaction's first write would start
    /// the log over and sync its header (``WALIndex``). Call it with
    /// ``waitsForLocks`` off.
    func beginWithoutWaiting() throws(StoreError) -> Bool {
        do throws(StoreError) {
            try begin()
        } catch  where error.sqlite?.resultCode == SQLITE_BUSY {
            return false
        }
        if inMemory { return true }
        if walIndex == nil { walIndex = WALIndex(database) }
        guard let walIndex, !walIndex.restartOwed else {
            try rollback()
            return false
        }
        return true
    }

    /// Commits the open transaction.
    func commit() throws(StoreError) { try database.execute("COMMIT") }

    /// Rolls the open transaction back, if SQLite has not done so already.
    func rollback() throws(StoreError) {
        guard database.isInTransaction else { return }
        try database.execute("ROLLBACK")
    }

    /// Marks the point a failed job rolls back to (jobs run one at a time, so
    /// one name serves every job).
    func savepoint() throws(StoreError) { try database.execute("SAVEPOINT job") }

    /// Keeps the job's changes in the enclosing transaction.
    func releaseSavepoint() throws(StoreError) { try database.execute("RELEASE job") }

    /// Undoes the job's changes and drops its savepoint.
    func rollbackToSavepoint() throws(StoreError) {
        try database.execute("ROLLBACK TO job")
        try releaseSavepoint()
    }

    /// Set by the commit hook when this connection should copy the rest of
    /// the log back itself (see ``StoreCheckpointer``); the writer does it
    /// with ``catchUpIfOwed()`` once the batch's results were handed on, so
    /// its fdatasync calls do not hold them back.
    var catchUpOwed = false
    /// Set by the commit hook when the log reached its limit: the catch-up
    /// first waits for a pass of this checkpointer that holds the log.
    var catchUpWaitsFor: StoreCheckpointer?

    /// Copies the rest of the log back if the commit hook asked for it;
    /// tries again after the next batch while the checkpointer thread's own
    /// pass holds the checkpoint, unless the log is at its limit: then it
    /// waits for that pass first.
    func catchUpIfOwed() {
        guard catchUpOwed else { return }
        catchUpWaitsFor.take()?.waitForRunningPass()
        do throws(StoreError) {
            if try database.checkpointPassively() != nil { catchUpOwed = false }
        } catch {
            catchUpOwed = false
            Log.warning("call store: catching up with the log failed: \(error.message)")
        }
    }

    /// Whether a transaction is still open; false after SQLite aborted one.
    var isInTransaction: Bool { database.isInTransaction }

    /// Records that tokens of `uid` issued at or before `revokedAt` are
    /// invalid. A revocation only moves forward: an older one is ignored.
    func saveRevocation(uid: String, revokedAt: Int64) throws(StoreError) {
        try database.execute(
            """
            INSERT INTO revocations (uid, revoked_at) VALUES (?1, ?2)
            ON CONFLICT (uid) DO UPDATE SET revoked_at = max(revoked_at, excluded.revoked_at)
            """, uid, revokedAt)
    }

    /// Every revocation: uid to the time before which its tokens are invalid.
    func revocations() throws(StoreError) -> [String: Int64] {
        var revocations: [String: Int64] = [:]
        try database.forEachRow("SELECT uid, revoked_at FROM revocations") { row in
            if let uid = row.optionalString(0) { revocations[uid] = row.int64(1) }
            return true
        }
        return revocations
    }
}
