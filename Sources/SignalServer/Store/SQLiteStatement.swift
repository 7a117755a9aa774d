import CSQLite

/// What one `sqlite3_step` produced.
enum SQLiteStep {
    /// A result row is available through the column getters.
    case row
    /// The statement ran to completion.
    case done
}

/// `SQLITE_TRANSIENT`: SQLite copies bound text before the bind call returns,
/// so the Swift buffer only has to live for the call.
private var transientDestructor: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

/// Owns one prepared statement and finalizes it exactly once, in deinit.
/// Parameters are numbered from 1 and result columns from 0, as in SQLite.
/// Used by one thread at a time, like the connection that prepared it; the
/// connection's cache hands it out reset, and users reset it when done.
final class SQLiteStatement {
    /// The SQL text the statement was prepared from.
    let sql: String
    private let handle: OpaquePointer

    /// Prepares `sql` (one statement) on `connection`, marked persistent
    /// because prepared statements are cached for the connection's lifetime.
    init(connection: OpaquePointer, sql: String) throws(SQLiteError) {
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard code == SQLITE_OK, let prepared else {
            sqlite3_finalize(prepared)
            // Text with no statement in it prepares to nothing with SQLITE_OK.
            throw SQLiteError(code: code == SQLITE_OK ? SQLITE_MISUSE : code, connection: connection, operation: sql)
        }
        handle = prepared
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds an integer, or NULL for nil, to parameter `index`.
    func bind(_ value: Int64?, at index: Int32) throws(SQLiteError) {
        guard let value else { return try bindNull(at: index) }
        try check(sqlite3_bind_int64(handle, index, value), "bind integer ?\(index)")
    }

    /// Binds UTF-8 text (copied by SQLite), or NULL for nil, to parameter `index`.
    func bind(_ value: String?, at index: Int32) throws(SQLiteError) {
        guard var value else { return try bindNull(at: index) }
        let code = value.withUTF8 { bytes -> Int32 in
            guard bytes.count <= Int(Int32.max) else { return SQLITE_TOOBIG }
            // A nil pointer would bind NULL: the empty string needs a real one.
            guard let base = bytes.baseAddress else {
                return sqlite3_bind_text(handle, index, "", 0, transientDestructor)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(bytes.count), transientDestructor)
            }
        }
        try check(code, "bind text ?\(index)")
    }

    func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index), "bind null ?\(index)")
    }

    /// Runs the statement to its next row or to completion.
    func step() throws(SQLiteError) -> SQLiteStep {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return .row
        case SQLITE_DONE: return .done
        default: throw SQLiteError(code: code, connection: sqlite3_db_handle(handle), operation: sql)
        }
    }

    /// Runs a statement that returns no rows (rows it does return are skipped),
    /// then resets it.
    func run() throws(SQLiteError) {
        defer { reset() }
        while try step() == .row {}
    }

    /// Whether column `column` of the current row is NULL.
    func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// Column `column` of the current row as an integer (0 for NULL).
    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// Column `column` of the current row as an integer, nil for NULL.
    func optionalInt64(at column: Int32) -> Int64? { isNull(at: column) ? nil : int64(at: column) }

    /// Column `column` of the current row as text, nil for NULL. Invalid
    /// UTF-8 is repaired with replacement characters.
    func string(at column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Readies the statement for reuse: rewinds it (ending any read it holds
    /// open) and clears every binding to NULL. The code `sqlite3_reset`
    /// returns repeats the last step's failure, which was already thrown.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Throws unless `code` is `SQLITE_OK`.
    /// `operation` is only made on a failure: a bind is on every save's
    /// path, and an interpolated message made each time was an allocation
    /// per parameter.
    private func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(SQLiteError) {
        guard code != SQLITE_OK else { return }
        throw SQLiteError(code: code, connection: sqlite3_db_handle(handle), operation: "\(operation()) of \(sql)")
    }
}
