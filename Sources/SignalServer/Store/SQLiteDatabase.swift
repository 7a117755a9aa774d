import CSQLite

/// Owns one SQLite connection and closes it exactly once, when the last
/// reference goes away. Opened `SQLITE_OPEN_NOMUTEX`: SQLite does no locking
/// of its own, so the connection, and every statement it prepares, must stay
/// on one thread. Hence not `Sendable`.
///
/// Statements are prepared once per SQL text and cached for the connection's
/// lifetime (``statement(_:)``).
final class SQLiteDatabase {
    /// The path the connection was opened with.
    let path: String
    private let handle: OpaquePointer
    private var cache: [String: SQLiteStatement] = [:]
    private var walHook: WALHook?

    /// Opens (creating if missing) the database file at `path` for reading
    /// and writing, with extended result codes on; `readOnly`, an existing
    /// file only for reading, so that a tool copying a store cannot change it.
    init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        var opened: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let error = SQLiteError(code: code, connection: opened, operation: "open \(path)")
            sqlite3_close_v2(opened)
            throw error
        }
        sqlite3_extended_result_codes(opened, 1)
        handle = opened
        self.path = path
    }

    /// Finalizes the cached statements, then closes the connection.
    /// `sqlite3_close_v2` defers the close until any statement still held
    /// elsewhere is finalized too, so none is left dangling.
    deinit {
        cache.removeAll()
        if walHook != nil { sqlite3_wal_hook(handle, nil, nil) }
        sqlite3_close_v2(handle)
    }

    /// The prepared statement for `sql`, from the cache or prepared now, reset
    /// and with its bindings cleared. The caller resets it again when done
    /// stepping (``SQLiteStatement/run()`` does) so no read stays open.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: handle, sql: sql)
        cache[sql] = statement
        return statement
    }

    /// The number of statements in the cache.
    var cachedStatementCount: Int { cache.count }

    /// Runs `sql`, which may hold several statements, without caching it
    /// (schema changes and one-off pragmas).
    func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard code == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            throw SQLiteError(extendedCode: code, message: message, operation: sql)
        }
    }

    /// The first column of the first row `sql` returns, as text (nil for
    /// NULL or no row). For pragmas that report a value.
    func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try statement.step() == .row ? statement.string(at: 0) : nil
    }

    /// The first column of the first row `sql` returns, as an integer (nil
    /// for NULL or no row).
    func scalarInt64(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try statement.step() == .row ? statement.optionalInt64(at: 0) : nil
    }

    /// How long a statement waits for another connection's lock before
    /// failing with `SQLITE_BUSY`.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// The rows the last INSERT, UPDATE or DELETE changed (for an UPDATE:
    /// matched, whether or not a value differed).
    var changes: Int32 { sqlite3_changes(handle) }

    /// Copies the write-ahead log back into the database file as far as no
    /// reader needs it, without waiting for any lock
    /// (`SQLITE_CHECKPOINT_PASSIVE`); returns the number of frames copied so
    /// far, or nil when another connection's checkpoint was running (nothing
    /// was done). A connection that has not read the database yet has not
    /// opened its log, and copies nothing.
    func checkpointPassively() throws(SQLiteError) -> Int32? {
        var logFrames: Int32 = 0, copiedFrames: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copiedFrames)
        if code == SQLITE_BUSY { return nil }
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, connection: handle, operation: "wal_checkpoint(PASSIVE)")
        }
        return max(0, copiedFrames)
    }

    /// Calls `hook` with the number of frames in the write-ahead log after
    /// every commit, on the committing thread (`sqlite3_wal_hook`). This
    /// replaces SQLite's automatic checkpoints: whoever sets a hook
    /// checkpoints.
    func onWALCommit(_ hook: @escaping (Int32) -> Void) {
        let box = WALHook(hook)
        walHook = box
        sqlite3_wal_hook(
            handle,
            { context, _, _, frames in
                if let context { Unmanaged<WALHook>.fromOpaque(context).takeUnretainedValue().body(frames) }
                return SQLITE_OK
            }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// Whether a transaction is open (the connection is not in autocommit
    /// mode). False after SQLite rolled a failed transaction back by itself.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }
}

/// The closure behind ``SQLiteDatabase/onWALCommit(_:)``, kept alive by the
/// database that hands SQLite an unretained pointer to it.
private final class WALHook {
    let body: (Int32) -> Void
    init(_ body: @escaping (Int32) -> Void) { self.body = body }
}
