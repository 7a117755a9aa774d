import CLibpq

#if canImport(Glibc)
    import Glibc
#endif

/// A failure PostgreSQL or libpq reported: the SQLSTATE when the server
/// sent one (`23505` for a unique violation), and the message.
public struct PostgresError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE, nil for failures of the connection itself.
    public let sqlState: String?
    public let message: String
    /// The SQL of the statement that failed, when one of a pipeline did
    /// (``PostgresConnection/run(_:)``): which of them is otherwise unknown.
    public let statement: String?

    public init(sqlState: String?, message: String, statement: String? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.statement = statement
    }

    /// `unique_violation`: the row exists (a second live call of one user, say).
    public static let uniqueViolation = "23505"
    /// `deadlock_detected`: PostgreSQL rolled back one of the transactions waiting in a cycle; retry it.
    public static let deadlockDetected = "40P01"
    /// `lock_not_available`: `lock_timeout` ran out waiting; retry.
    public static let lockNotAvailable = "55P03"
    /// `serialization_failure`: retry the transaction.
    public static let serializationFailure = "40001"

    public var description: String {
        let text = sqlState.map { "\($0): \(message)" } ?? message
        // The statement's first line says which it was; the rest would flood the log.
        guard let line = statement?.split(separator: "\n").first else { return text }
        return text + " (in `\(line.prefix(80))`)"
    }
}

/// Runs `body`, reporting a PostgreSQL failure as a ``StoreError`` (a
/// SQLite failure is one from the start, see ``SQLiteDatabase``).
@discardableResult
func reportingPostgresErrors<Value>(_ body: () throws(PostgresError) -> Value) throws(StoreError) -> Value {
    do throws(PostgresError) {
        return try body()
    } catch {
        throw StoreError(error)
    }
}

/// One libpq connection, owned: opened by `init`, closed in `deinit`. Used
/// by one thread at a time (libpq connections are not thread-safe), like
/// ``SQLiteDatabase``. Parameters go as text in `$1…`, never spliced into
/// the SQL.
final class PostgresConnection {
    let handle: OpaquePointer
    /// The store's epoch as this session found it (``storeEpoch()``), nil until read.
    private(set) var knownEpoch: String?
    /// The statements ``run(_:)`` prepared on this connection, by SQL text: their names.
    var preparedStatements: [String: String] = [:]
    /// The statements the pipeline being sent prepares, cached once the server answered.
    var pendingPrepares: [String: String] = [:]
    /// How many times this connection waited for the server: each
    /// statement run alone, each pipeline (what a transition costs in latency).
    var roundTrips = 0

    /// What a connection uses unless the URL says otherwise: a bounded
    /// connect, and TCP keepalives with a user timeout, so that a database
    /// that vanished without closing the connection (a partition, a
    /// failover) fails it in seconds rather than the kernel's minutes.
    static let defaults: [(String, String)] = [
        ("connect_timeout", "10"), ("keepalives", "1"), ("keepalives_idle", "5"), ("keepalives_interval", "2"),
        ("keepalives_count", "3"), ("tcp_user_timeout", "10000"),
    ]

    /// Connects with a libpq connection string (`host=/run/postgresql
    /// dbname=ringd`, or a `postgresql://` URL), over ``defaults``. Blocks
    /// until connected or refused.
    init(url: String) throws(PostgresError) {
        // Later keywords win: the defaults first, then what the URL expands to.
        let pairs = Self.defaults + [("dbname", url)]
        let keywords = pairs.map { strdup($0.0) }, values = pairs.map { strdup($0.1) }
        defer { (keywords + values).forEach { free($0) } }
        let connection = (keywords.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { keys in
            (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { vals in
                PQconnectdbParams(keys.baseAddress, vals.baseAddress, 1)
            }
        }
        guard let handle = connection else {
            throw PostgresError(sqlState: nil, message: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            // libpq's message names the host and the reason, never the password.
            let message = Self.trimmed(PQerrorMessage(handle))
            PQfinish(handle)
            throw PostgresError(sqlState: nil, message: "connecting to PostgreSQL: \(message)")
        }
        // libpq prints the server's notices (a restart's warning) to stderr; ringd logs what matters itself.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        self.handle = handle
    }

    deinit { PQfinish(handle) }

    /// Runs one statement with `parameters` bound to `$1…` (nil: NULL) and
    /// returns its rows (none for a command).
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> PostgresRows {
        let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.flatMap { strdup($0) } }
        defer { for copy in copies { free(copy) } }
        let result: OpaquePointer? = copies.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { values in
                PQexecParams(
                    handle, sql, Int32(values.count), nil, values.isEmpty ? nil : values.baseAddress, nil, nil, 0)
            }
        }
        roundTrips += 1
        guard let result else {
            throw PostgresError(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)))
        }
        let rows = PostgresRows(result)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return rows
        default:
            throw Self.error(of: result)
        }
    }

    /// The failure a result reports, with the statement's SQL when given.
    static func error(of result: OpaquePointer, statement: String? = nil) -> PostgresError {
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        return PostgresError(sqlState: state, message: trimmed(PQresultErrorMessage(result)), statement: statement)
    }

    /// Runs `script`, one or more statements without parameters (a
    /// migration), through the simple query protocol, which
    /// ``execute(_:_:)``'s one-statement extended protocol is not.
    func run(script: String) throws(PostgresError) {
        roundTrips += 1
        guard let result = PQexec(handle, script) else {
            throw PostgresError(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)))
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return
        default:
            throw Self.error(of: result)
        }
    }

    /// How ``transaction(_:_:)`` begins.
    enum TransactionMode: String {
        /// Read committed: each statement sees what committed before it.
        case readWrite = "BEGIN"
        /// One snapshot for every statement and no writes: reads that must
        /// agree with each other, and never a serialization failure.
        case readOnlySnapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back
    /// when it throws. Refused while a transaction is open, whose COMMIT
    /// would otherwise end the caller's. A statement that failed inside
    /// `body` fails the transaction even if `body` caught the error, as
    /// PostgreSQL would silently turn the COMMIT into a ROLLBACK.
    func transaction<T>(
        _ mode: TransactionMode = .readWrite,
        _ body: () throws(PostgresError) -> T
    ) throws(PostgresError) -> T {
        guard PQtransactionStatus(handle) == PQTRANS_IDLE else {
            throw PostgresError(sqlState: nil, message: "a transaction is already open on this connection")
        }
        try execute(mode.rawValue)
        do throws(PostgresError) {
            let value = try body()
            guard PQtransactionStatus(handle) != PQTRANS_INERROR else {
                throw PostgresError(
                    sqlState: Self.inFailedTransaction,
                    message: "a statement of the transaction failed; it was rolled back")
            }
            try execute("COMMIT")
            return value
        } catch {
            if PQtransactionStatus(handle) != PQTRANS_IDLE { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// `in_failed_sql_transaction`.
    private static let inFailedTransaction = "25P02"

    /// `values` as one text array parameter (`= ANY($1::text[])`): each
    /// element quoted, its quotes and backslashes escaped, so commas,
    /// braces, spaces and the word NULL stay part of a value.
    static func textArray(_ values: [String]) -> String {
        // By scalar: a quote a combining mark follows is one Character, not "\"".
        let elements = values.map { value in
            var escaped = String.UnicodeScalarView()
            for scalar in value.unicodeScalars {
                if scalar == "\"" || scalar == "\\" { escaped.append("\\") }
                escaped.append(scalar)
            }
            return "\"" + String(escaped) + "\""
        }
        return "{" + elements.joined(separator: ",") + "}"
    }

    /// Whether a statement of the open transaction failed: it can only roll back.
    var transactionFailed: Bool { PQtransactionStatus(handle) == PQTRANS_INERROR }

    /// The store's epoch (``Authentication/epoch``), read once per
    /// session: a failover or a restore breaks the session, and the next
    /// one reads it again.
    func storeEpoch() throws(PostgresError) -> String {
        if let knownEpoch { return knownEpoch }
        return remember(epoch: try execute(Self.storeEpochQuery))
    }

    /// The query of the store's epoch, for a pipeline to run along (then ``remember(epoch:)``).
    static let storeEpochQuery = "SELECT ringd_store_epoch()"

    /// Keeps the epoch ``storeEpochQuery`` answered for this session.
    @discardableResult
    func remember(epoch rows: PostgresRows) -> String {
        let epoch = rows.string(0, 0) ?? ""
        knownEpoch = epoch
        return epoch
    }

    /// Whether a transaction is open on the connection.
    var isInTransaction: Bool { PQtransactionStatus(handle) != PQTRANS_IDLE }

    /// Whether the connection is usable as far as can be told without a
    /// round trip: an idle connection the server closed (it restarted)
    /// has its end of the stream waiting to be read.
    var isAlive: Bool {
        guard isOpen else { return false }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        if descriptor.fd < 0 { return false }
        // A server that shuts down sends its FATAL, then closes: the first
        // read takes the message and the connection still looks fine, the
        // next finds the end of the stream.
        for _ in 0 ..< 3 where isOpen {
            guard poll(&descriptor, 1, 0) > 0 else { break }
            if PQconsumeInput(handle) == 0 { return false }
        }
        return isOpen
    }

    /// Whether the connection is still usable (a server restart breaks it).
    var isOpen: Bool { PQstatus(handle) == CONNECTION_OK }

    static func trimmed(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown libpq error" }
        var message = String(cString: text)
        while message.last?.isWhitespace == true { message.removeLast() }
        return message
    }
}

/// The rows of one statement's result, owned: cleared in `deinit`. Values
/// are text, as PostgreSQL sends them without a binary format.
final class PostgresRows {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) { self.result = result }

    deinit { PQclear(result) }

    var count: Int { Int(PQntuples(result)) }

    /// Rows a command changed (`UPDATE`, `INSERT`, `DELETE`), 0 otherwise.
    var affected: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    /// The value at `row`, `column`; nil for NULL.
    func string(_ row: Int, _ column: Int) -> String? {
        guard PQgetisnull(result, Int32(row), Int32(column)) == 0 else { return nil }
        return String(cString: PQgetvalue(result, Int32(row), Int32(column)))
    }

    /// An integer value; nil for NULL or text that is not one.
    func int64(_ row: Int, _ column: Int) -> Int64? { string(row, column).flatMap { Int64($0) } }
}

/// A `NOTIFY` this connection heard.
struct PostgresNotification: Sendable {
    let channel: String
    let payload: String
}

extension PostgresConnection {
    /// Waits up to `timeoutMillis` for notifications on the channels this
    /// connection `LISTEN`s to and returns those that arrived, in commit
    /// order (none on a timeout). Throws when the connection broke.
    func notifications(waitingMillis timeoutMillis: Int32) throws(PostgresError) -> [PostgresNotification] {
        var heard = takeNotifications()
        guard heard.isEmpty else { return heard }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        guard descriptor.fd >= 0 else {
            throw PostgresError(sqlState: nil, message: "the connection to PostgreSQL is closed")
        }
        let ready = poll(&descriptor, 1, timeoutMillis)
        if ready < 0 && errno != EINTR {
            throw PostgresError(sqlState: nil, message: "poll on the PostgreSQL connection failed: errno \(errno)")
        }
        if ready > 0 {
            guard PQconsumeInput(handle) == 1 else {
                throw PostgresError(
                    sqlState: nil, message: "reading from PostgreSQL: " + Self.trimmed(PQerrorMessage(handle)))
            }
            heard = takeNotifications()
        }
        return heard
    }

    private func takeNotifications() -> [PostgresNotification] {
        var heard: [PostgresNotification] = []
        while let notification = PQnotifies(handle) {
            heard.append(
                PostgresNotification(
                    channel: String(cString: notification.pointee.relname),
                    payload: String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return heard
    }
}
