/// A stable code of a call store failure. Open, like ``SignalErrorCode``.
public struct StoreErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code string, e.g. `STORE_BAD_CURSOR`.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// A call log cursor was not one the store issued; the request is invalid (400).
    public static let badCursor = StoreErrorCode(rawValue: "STORE_BAD_CURSOR")
    /// A call log query parameter is out of range (the message names it); the request is invalid (400).
    public static let badQuery = StoreErrorCode(rawValue: "STORE_BAD_QUERY")
    /// The store was closed; the operation did not run.
    public static let closed = StoreErrorCode(rawValue: "STORE_CLOSED")
    /// SQLite failed; the message starts with its code, e.g. `SQLITE_FULL`.
    public static let database = StoreErrorCode(rawValue: "STORE_DATABASE")
    /// The database directory could not be created.
    public static let directory = StoreErrorCode(rawValue: "STORE_DIRECTORY")
    /// A stored row holds a value this version cannot decode.
    public static let corruptRow = StoreErrorCode(rawValue: "STORE_CORRUPT_ROW")
    /// The database was migrated by a newer version of the server.
    public static let schemaTooNew = StoreErrorCode(rawValue: "STORE_SCHEMA_TOO_NEW")
    /// A save would change the parties of a stored call; the save did not happen.
    public static let callConflict = StoreErrorCode(rawValue: "STORE_CALL_CONFLICT")
    /// An earlier change failed to commit, and this one, which may build on
    /// it, was not run (see ``CallStore/commit(_:wakeWriter:recording:completion:)``).
    public static let chainBroken = StoreErrorCode(rawValue: "STORE_CHAIN_BROKEN")
    /// Another process serves this store (see ``StoreLock``); nothing was opened.
    public static let inUse = StoreErrorCode(rawValue: "STORE_IN_USE")
    /// A blocking method was called from a store completion (on the thread
    /// running the batch), where waiting would deadlock; it did not run.
    public static let reentrant = StoreErrorCode(rawValue: "STORE_REENTRANT")
    /// PostgreSQL broke a deadlock or a serialization conflict by rolling
    /// this transaction back; running it again will do.
    public static let retry = StoreErrorCode(rawValue: "STORE_RETRY")
}

/// A call store failure: a stable code and a human-readable message.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable code.
    public let code: StoreErrorCode
    /// What went wrong, for people (and logs).
    public let message: String
    /// The SQLite failure behind a ``StoreErrorCode/database`` error, whole:
    /// its codes, for callers that tell one apart (a UNIQUE constraint), and
    /// all of the SQL, which the message shortens.
    let sqlite: SQLiteError?

    public init(_ code: StoreErrorCode, _ message: String) {
        self.code = code
        self.message = message
        sqlite = nil
    }

    /// A ``StoreErrorCode/database`` error describing `error`: the one way a
    /// SQLite failure becomes a store error.
    init(_ error: SQLiteError) {
        code = .database
        message = error.description
        sqlite = error
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
