import CSQLite

/// `SQLITE_TRANSIENT`: SQLite copies bound text before the bind call returns,
/// so the Swift buffer only has to live for the call.
private var transientDestructor: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

/// Owns one prepared statement and finalizes it exactly once, in deinit.
/// Parameters are numbered from 1 and result columns from 0, as in SQLite.
/// Only ``SQLiteDatabase`` runs it (``SQLiteDatabase/forEachRow(_:_:while:)``
/// and the rest), on the connection's thread: it hands it out reset, with
/// its bindings cleared, and resets it when done.
final class SQLiteStatement {
    /// The SQL text the statement was prepared from.
    let sql: String
    private let handle: OpaquePointer

    /// Prepares `sql` (one statement) on `connection`, marked persistent
    /// because prepared statements are cached for the connection's lifetime.
    /// Text after the first statement is refused, not skipped as SQLite
    /// would: several statements go through ``SQLiteDatabase/executeScript(_:)``.
    init(connection: OpaquePointer, sql: String) throws(StoreError) {
        var prepared: OpaquePointer?
        let (code, more) = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(connection, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, &tail)
            return (code, tail.map { String(cString: $0).contains { !$0.isWhitespace } } ?? false)
        }
        guard code == SQLITE_OK, !more, let prepared else {
            sqlite3_finalize(prepared)
            guard code == SQLITE_OK else {
                throw StoreError(SQLiteError(code: code, connection: connection, operation: sql))
            }
            // Text with no statement in it prepares to nothing with SQLITE_OK.
            let message = more ? "more than one statement" : "no statement"
            throw StoreError(SQLiteError(extendedCode: SQLITE_MISUSE, message: message, operation: sql))
        }
        handle = prepared
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds an integer to parameter `index`.
    func bind(_ value: Int64, at index: Int32) throws(StoreError) {
        try check(sqlite3_bind_int64(handle, index, value), "bind integer ?\(index)")
    }

    /// Binds UTF-8 text (copied by SQLite) to parameter `index`.
    func bind(_ value: String, at index: Int32) throws(StoreError) {
        var value = value
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

    /// Binds NULL to parameter `index`. A NULL past the last parameter the
    /// text names is accepted and dropped: SQL assembled from optional
    /// filters takes one argument list, and a parameter left unbound reads
    /// as NULL anyway.
    func bindNull(at index: Int32) throws(StoreError) {
        let code = sqlite3_bind_null(handle, index)
        if code == SQLITE_RANGE && index > sqlite3_bind_parameter_count(handle) { return }
        try check(code, "bind null ?\(index)")
    }

    /// Runs the statement to its next row (true; read it through ``row``)
    /// or to completion (false).
    func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw StoreError(SQLiteError(code: code, connection: sqlite3_db_handle(handle), operation: sql))
        }
    }

    /// The current row; valid until the next step or reset.
    var row: SQLiteRow { SQLiteRow(handle: handle) }

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
    private func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(StoreError) {
        guard code != SQLITE_OK else { return }
        throw StoreError(
            SQLiteError(code: code, connection: sqlite3_db_handle(handle), operation: "\(operation()) of \(sql)"))
    }
}

/// The current row of a statement, decoded by column index (from 0). A
/// view, not a copy: valid only inside the closure it is handed to, and
/// nothing is read until a getter asks.
struct SQLiteRow {
    fileprivate let handle: OpaquePointer

    /// Whether column `column` is NULL.
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// Column `column` as an integer (0 for NULL, as SQLite converts it).
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// Column `column` as an integer, nil for NULL.
    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    /// Column `column` as text, nil for NULL. Invalid UTF-8 is repaired
    /// with replacement characters.
    func optionalString(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Column `column` as text, empty for NULL.
    func string(_ column: Int32) -> String { optionalString(column) ?? "" }
}

/// A value a statement parameter takes: see
/// ``SQLiteDatabase/execute(_:_:)``, which binds its arguments in order
/// from ?1. Generic, so that binding boxes nothing on the save path.
protocol SQLiteBindable {
    func bind(to statement: SQLiteStatement, at index: Int32) throws(StoreError)
}

extension Int64: SQLiteBindable {
    func bind(to statement: SQLiteStatement, at index: Int32) throws(StoreError) {
        try statement.bind(self, at: index)
    }
}

/// As a 64-bit integer: limits and counts.
extension Int: SQLiteBindable {
    func bind(to statement: SQLiteStatement, at index: Int32) throws(StoreError) {
        try statement.bind(Int64(self), at: index)
    }
}

extension String: SQLiteBindable {
    func bind(to statement: SQLiteStatement, at index: Int32) throws(StoreError) {
        try statement.bind(self, at: index)
    }
}

/// nil binds NULL. Specialized for the save path's optional columns: a
/// pack's elements are bound through their witnesses, and the generic body
/// copied each value through its type's metadata.
extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    @_specialize(where Wrapped == String)
    @_specialize(where Wrapped == Int64)
    func bind(to statement: SQLiteStatement, at index: Int32) throws(StoreError) {
        guard let self else { return try statement.bindNull(at: index) }
        try self.bind(to: statement, at: index)
    }
}
