import CLibpq

#if canImport(Glibc)
    import Glibc
#endif

/// Statements sent to PostgreSQL together and answered together: one round
/// trip for all of them (libpq's pipeline mode) instead of one each, which
/// is what a cluster transition's latency and a node's throughput are made
/// of (docs/CLUSTER.md, "How it works"). The server runs them in order;
/// the first that fails aborts the rest up to the end of the pipeline.
struct PostgresPipeline {
    struct Statement {
        let sql: String
        let parameters: [String?]

        init(sql: String, parameters: [String?] = []) {
            self.sql = sql
            self.parameters = parameters
        }

        init(_ sql: String, _ parameters: [String?] = []) { self.init(sql: sql, parameters: parameters) }
    }

    private(set) var statements: [Statement] = []

    var isEmpty: Bool { statements.isEmpty }

    /// Queues `sql` with `parameters` bound to `$1…` (nil: NULL); returns
    /// the index of its result in what ``PostgresConnection/run(_:)`` returns.
    @discardableResult
    mutating func append(_ statement: Statement) -> Int {
        statements.append(statement)
        return statements.count - 1
    }

    @discardableResult
    mutating func append(_ sql: String, _ parameters: [String?] = []) -> Int {
        append(Statement(sql: sql, parameters: parameters))
    }

    /// Queues every statement of `other` after these; returns the index
    /// of the first one's result.
    @discardableResult
    mutating func append(contentsOf other: PostgresPipeline) -> Int {
        statements += other.statements
        return statements.count - other.statements.count
    }
}

extension PostgresConnection {
    /// Runs `statement` alone: one round trip.
    @discardableResult
    func execute(_ statement: PostgresPipeline.Statement) throws(PostgresError) -> PostgresRows {
        try execute(statement.sql, statement.parameters)
    }

    /// Sends every statement of `pipeline` with one sync and returns their
    /// results in order. Each statement is prepared once per connection (by
    /// its SQL text) and executed by name afterwards, so the server parses
    /// and plans it once. Throws the first failure, with the SQL that
    /// failed in ``PostgresError/statement``; the statements after it did
    /// not run, and a transaction the pipeline was in can only roll back.
    ///
    /// Blocking mode is enough: a pipeline is a few kilobytes and its
    /// results fewer, well within the socket buffers, so the server never
    /// waits for this side to read while this side is still sending.
    func run(_ pipeline: PostgresPipeline) throws(PostgresError) -> [PostgresRows] {
        let (completed, failure) = runUntilFailure(pipeline)
        if let failure { throw failure }
        return completed
    }

    /// Runs `pipeline` as ``run(_:)`` does, and returns the results of the
    /// statements that ran, in order, with the failure that stopped the
    /// rest: a pipeline that holds a `COMMIT` and something after it tells
    /// whether that `COMMIT` was answered, so committed, when a later
    /// statement failed (or the connection broke after it).
    func runUntilFailure(_ pipeline: PostgresPipeline) -> (completed: [PostgresRows], failure: PostgresError?) {
        guard !pipeline.isEmpty else { return ([], nil) }
        guard PQenterPipelineMode(handle) == 1 else { return ([], lastError("entering pipeline mode")) }
        // What was sent, in order: each new statement's Parse, then its execution.
        var sent: [(statement: Int, prepares: String?)] = []
        var sendFailure: PostgresError?
        for (index, statement) in pipeline.statements.enumerated() {
            var name = preparedStatements[statement.sql] ?? pendingPrepares[statement.sql]
            if name == nil {
                let fresh = "ringd_\(preparedStatements.count + pendingPrepares.count)"
                guard PQsendPrepare(handle, fresh, statement.sql, 0, nil) == 1 else {
                    sendFailure = lastError("sending a statement")
                    break
                }
                pendingPrepares[statement.sql] = fresh
                sent.append((index, fresh))
                name = fresh
            }
            guard let name, send(name, statement.parameters) else {
                sendFailure = lastError("sending a statement")
                break
            }
            sent.append((index, nil))
        }
        roundTrips += 1
        if sendFailure == nil, PQpipelineSync(handle) != 1 { sendFailure = lastError("ending a pipeline") }
        defer {
            pendingPrepares = [:]
            PQexitPipelineMode(handle)
        }
        if let sendFailure { return ([], sendFailure) }
        var results: [PostgresRows] = []
        var failure: PostgresError?
        for (index, prepares) in sent {
            let sql = pipeline.statements[index].sql
            guard let result = PQgetResult(handle) else {
                return (results, failure ?? lastError("reading a pipeline's results", statement: sql))
            }
            let rows = PostgresRows(result)
            while let extra = PQgetResult(handle) { PQclear(extra) }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK where prepares != nil:
                preparedStatements[sql] = prepares
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
                results.append(rows)
            case PGRES_PIPELINE_ABORTED:
                continue
            default:
                if failure == nil { failure = Self.error(of: result, statement: sql) }
            }
        }
        let sync = PQgetResult(handle)
        defer { if let sync { PQclear(sync) } }
        guard let sync, PQresultStatus(sync) == PGRES_PIPELINE_SYNC else {
            return (results, failure ?? lastError("reading a pipeline's end"))
        }
        return (results, failure)
    }

    /// Queues the execution of the prepared statement `name`.
    private func send(_ name: String, _ parameters: [String?]) -> Bool {
        let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.flatMap { strdup($0) } }
        defer { for copy in copies { free(copy) } }
        return copies.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { values in
                PQsendQueryPrepared(
                    handle, name, Int32(values.count), values.isEmpty ? nil : values.baseAddress, nil, nil, 0) == 1
            }
        }
    }

    private func lastError(_ doing: String, statement: String? = nil) -> PostgresError {
        PostgresError(sqlState: nil, message: "\(doing): " + Self.trimmed(PQerrorMessage(handle)), statement: statement)
    }
}
