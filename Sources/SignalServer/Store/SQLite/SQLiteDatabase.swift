import CSQLite

/// Owns one SQLite connection and closes it exactly once, when the last
/// reference goes away. Opened `SQLITE_OPEN_NOMUTEX`: SQLite does no locking
/// of its own, so the connection, and every statement it prepares, must stay
/// on one thread. Hence not `Sendable`.
///
/// Statements are prepared once per SQL text and cached for the connection's
/// lifetime; ``forEachRow(_:_:while:)``, ``fetchAll(_:_:decode:)``,
/// ``fetchOne(_:_:decode:)`` and ``execute(_:_:)`` run them, and every
/// failure is a ``StoreError`` that carries the ``SQLiteError``.
final class SQLiteDatabase {
    /// The path the connection was opened with.
    let path: String
    private let handle: OpaquePointer
    private var cache: [SQLKey: SQLiteStatement] = [:]
    private var walHook: WALHook?

    /// Opens (creating if missing) the database file at `path` for reading
    /// and writing, with extended result codes on; `readOnly`, an existing
    /// file only for reading, so that a tool copying a store cannot change it.
    init(path: String, readOnly: Bool = false) throws(StoreError) {
        var opened: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let error = SQLiteError(code: code, connection: opened, operation: "open \(path)")
            sqlite3_close_v2(opened)
            throw StoreError(error)
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

    /// Calls `body` with each row `sql` returns, `arguments` bound in order
    /// from ?1, until it returns false or the rows run out. The statement is
    /// prepared once per connection and SQL text, and reset when done, so no
    /// read stays open; every SQLite failure, with the SQL, is a
    /// ``StoreErrorCode/database`` error. The one stepping loop of the store:
    /// the others below are built on it.
    func forEachRow<each Argument: SQLiteBindable>(
        _ sql: String, _ arguments: repeat each Argument, while body: (SQLiteRow) throws(StoreError) -> Bool
    ) throws(StoreError) {
        let statement = try statement(sql)
        defer { statement.reset() }
        var index: Int32 = 0
        for argument in repeat each arguments {
            index += 1
            try argument.bind(to: statement, at: index)
        }
        while try statement.step(), try body(statement.row) {}
    }

    /// Every row `sql` returns, as `decode` makes it.
    func fetchAll<Value, each Argument: SQLiteBindable>(
        _ sql: String, _ arguments: repeat each Argument, decode: (SQLiteRow) throws(StoreError) -> Value
    ) throws(StoreError) -> [Value] {
        var values: [Value] = []
        try forEachRow(sql, repeat each arguments) { row throws(StoreError) in
            values.append(try decode(row))
            return true
        }
        return values
    }

    /// The first row `sql` returns, as `decode` makes it; nil for none.
    /// The rest are not read.
    func fetchOne<Value, each Argument: SQLiteBindable>(
        _ sql: String, _ arguments: repeat each Argument, decode: (SQLiteRow) throws(StoreError) -> Value
    ) throws(StoreError) -> Value? {
        var value: Value?
        try forEachRow(sql, repeat each arguments) { row throws(StoreError) in
            value = try decode(row)
            return false
        }
        return value
    }

    /// Runs `sql` (rows it returns are skipped); returns the rows it changed
    /// (`sqlite3_changes`: for an UPDATE, matched, whether or not a value differed).
    @discardableResult
    func execute<each Argument: SQLiteBindable>(
        _ sql: String, _ arguments: repeat each Argument
    ) throws(StoreError) -> Int {
        try forEachRow(sql, repeat each arguments) { _ in true }
        return Int(sqlite3_changes(handle))
    }

    /// The first column of the first row `sql` returns, as text (nil for
    /// NULL or no row). For pragmas that report a value.
    func scalarText(_ sql: String) throws(StoreError) -> String? {
        try fetchOne(sql) { row in row.optionalString(0) } ?? nil
    }

    /// The first column of the first row `sql` returns, as an integer (nil
    /// for NULL or no row).
    func scalarInt64(_ sql: String) throws(StoreError) -> Int64? {
        try fetchOne(sql) { row in row.optionalInt64(0) } ?? nil
    }

    /// The number of statements in the cache.
    var cachedStatementCount: Int { cache.count }

    /// Runs `sql`, which may hold several statements, without caching it
    /// (schema changes and one-off pragmas).
    func executeScript(_ sql: String) throws(StoreError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard code == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            throw StoreError(SQLiteError(extendedCode: code, message: message, operation: sql))
        }
    }

    /// The prepared statement for `sql`, from the cache or prepared now, reset
    /// and with its bindings cleared (a statement a failure left mid-way is
    /// ready again).
    private func statement(_ sql: String) throws(StoreError) -> SQLiteStatement {
        if let cached = cache[SQLKey(sql)] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: handle, sql: sql)
        cache[SQLKey(sql)] = statement
        return statement
    }

    /// How long a statement waits for another connection's lock before
    /// failing with `SQLITE_BUSY`.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Copies the write-ahead log back into the database file as far as no
    /// reader needs it, without waiting for any lock
    /// (`SQLITE_CHECKPOINT_PASSIVE`); returns the number of frames copied so
    /// far, or nil when another connection's checkpoint was running (nothing
    /// was done). A connection that has not read the database yet has not
    /// opened its log, and copies nothing.
    func checkpointPassively() throws(StoreError) -> Int32? {
        var logFrames: Int32 = 0, copiedFrames: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copiedFrames)
        if code == SQLITE_BUSY { return nil }
        guard code == SQLITE_OK else {
            throw StoreError(SQLiteError(code: code, connection: handle, operation: "wal_checkpoint(PASSIVE)"))
        }
        return max(0, copiedFrames)
    }

    /// The start of the connection's log index (the first region of the
    /// `-shm` file, as SQLite maps it: ``WALIndex``), nil in memory or before
    /// the connection opened its log. It stays valid while the connection is
    /// open in WAL mode: SQLite maps each region once, and unmaps them only
    /// when it closes the log.
    func walIndexHeader() -> UnsafeRawPointer? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK, let file,
            let methods = file.pointee.pMethods, methods.pointee.iVersion >= 2, let map = methods.pointee.xShmMap
        else { return nil }
        var region: UnsafeMutableRawPointer?
        // 32 KiB: the size of every region of the index; 0: map none that is missing.
        guard map(file, 0, 32768, 0, &region) == SQLITE_OK else { return nil }
        return region.map { UnsafeRawPointer($0) }
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

/// A statement cache key that hashes an SQL text by its length and last 32
/// bytes rather than every byte: the texts are few and long, so a collision
/// costs one comparison, where hashing the whole text cost more than binding
/// a call's row.
private struct SQLKey: Hashable {
    let sql: String

    init(_ sql: String) { self.sql = sql }

    func hash(into hasher: inout Hasher) {
        hasher.combine(sql.utf8.count)
        let hashed: Void? = sql.utf8.withContiguousStorageIfAvailable { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(32))))
        }
        if hashed == nil { hasher.combine(sql) }
    }
}
