import CSQLite

/// A failed SQLite call: the result codes, SQLite's message, and the SQL or
/// operation that failed.
struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, …).
    let resultCode: Int32
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, …); equal to
    /// ``resultCode`` when SQLite gave no detail.
    let extendedCode: Int32
    /// SQLite's message (`sqlite3_errmsg`), or the generic text of the code.
    let message: String
    /// The SQL text or the name of the operation that failed.
    let operation: String

    /// An error from an extended result code, its message and the failed operation.
    init(extendedCode: Int32, message: String, operation: String) {
        resultCode = extendedCode & 0xFF
        self.extendedCode = extendedCode
        self.message = message
        self.operation = operation
    }

    /// The error `code` that `operation` returned on `connection`, with the
    /// connection's message when the connection recorded that error, else
    /// (no connection, or a failure found before SQLite was called) the
    /// generic text of `code`.
    init(code: Int32, connection: OpaquePointer?, operation: String) {
        let message: String
        if let connection, sqlite3_extended_errcode(connection) == code {
            message = String(cString: sqlite3_errmsg(connection))
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
        self.init(extendedCode: code, message: message, operation: operation)
    }

    /// `SQLITE_CONSTRAINT_UNIQUE`: a UNIQUE constraint failed (C defines it
    /// as an expression, which Swift does not import).
    static let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)

    /// The stable name of the primary result code, e.g. `SQLITE_BUSY`.
    var code: String {
        switch resultCode {
        case 0 ..< Int32(Self.primaryNames.count): return Self.primaryNames[Int(resultCode)]
        case SQLITE_ROW: return "SQLITE_ROW"
        case SQLITE_DONE: return "SQLITE_DONE"
        default: return "SQLITE_UNKNOWN_\(resultCode)"
        }
    }

    var description: String {
        let codes = extendedCode == resultCode ? "\(resultCode)" : "\(resultCode)/\(extendedCode)"
        return "\(code) (\(codes)): \(message); in \(Self.shortened(operation))"
    }

    /// The longest SQL text a message quotes, in characters.
    static let quotedSQLLimit = 200

    /// `sql` as a message quotes it: whitespace runs as one space, and cut
    /// after ``quotedSQLLimit`` characters, since a history query or a
    /// migration runs to pages that would bury the message (``operation``
    /// keeps the whole text).
    static func shortened(_ sql: String) -> String {
        let oneLine = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return oneLine.count > quotedSQLLimit ? String(oneLine.prefix(quotedSQLLimit)) + "…" : oneLine
    }

    /// The names of the primary result codes 0 through 28, in code order.
    private static let primaryNames = [
        "SQLITE_OK", "SQLITE_ERROR", "SQLITE_INTERNAL", "SQLITE_PERM", "SQLITE_ABORT", "SQLITE_BUSY",
        "SQLITE_LOCKED", "SQLITE_NOMEM", "SQLITE_READONLY", "SQLITE_INTERRUPT", "SQLITE_IOERR",
        "SQLITE_CORRUPT", "SQLITE_NOTFOUND", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_PROTOCOL",
        "SQLITE_EMPTY", "SQLITE_SCHEMA", "SQLITE_TOOBIG", "SQLITE_CONSTRAINT", "SQLITE_MISMATCH",
        "SQLITE_MISUSE", "SQLITE_NOLFS", "SQLITE_AUTH", "SQLITE_FORMAT", "SQLITE_RANGE", "SQLITE_NOTADB",
        "SQLITE_NOTICE", "SQLITE_WARNING",
    ]
}
