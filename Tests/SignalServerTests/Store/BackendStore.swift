import SignalProtocol

@testable import SignalServer

/// The stores ringd keeps calls in: SQLite in a file or in memory (through
/// ``CallStore`` and its writer, as a single node uses it) and PostgreSQL
/// (through ``PostgresConnection``, as a cluster node does). The history
/// and resume suites run each case on every one, so both backends answer
/// alike by construction rather than by a copied suite.
enum StoreBackend: String, CaseIterable, Sendable {
    case file, memory, postgres
}

/// A store of a ``StoreBackend`` with blocking reads and writes; ``close()``
/// closes it and removes what it made.
final class BackendStore {
    private enum Opened {
        case sqlite(TestStore)
        case postgres(ThrowawayPostgres, PostgresConnection)
    }

    private let opened: Opened

    init(_ backend: StoreBackend) throws {
        switch backend {
        case .file: opened = .sqlite(try TestStore(.file))
        case .memory: opened = .sqlite(try TestStore(.memory))
        case .postgres:
            let server = try ThrowawayPostgres()
            opened = .postgres(server, try server.migratedConnection())
        }
    }

    /// Saves the snapshots `calls` in order, as changes creating or
    /// updating them at each one's `seq`.
    func save(_ calls: [Call]) throws {
        switch opened {
        case .sqlite(let test): try test.store.saveAndWait(calls)
        case .postgres(_, let connection): for call in calls { try connection.save(call) }
        }
    }

    func logs(_ uid: String, _ query: CallLogFilter = CallLogFilter()) throws -> CallLogPage {
        switch opened {
        case .sqlite(let test): try test.store.logs(uid, query)
        case .postgres(_, let connection): try connection.callLogs(for: uid, query: query)
        }
    }

    /// Every page of `uid`'s history for `query`, concatenated.
    func allLogs(_ uid: String, _ query: CallLogFilter) throws -> [CallLog] {
        try everyPage(from: query) { try logs(uid, $0) }
    }

    func changedCalls(of uid: String, after seq: Int64, limit: Int) throws -> ChangedCalls {
        switch opened {
        case .sqlite(let test):
            try waitForResult { test.store.changedCalls(of: uid, after: seq, limit: limit, completion: $0) }.get()
        case .postgres(_, let connection): try connection.changedCalls(of: uid, after: seq, limit: limit)
        }
    }

    func close() {
        switch opened {
        case .sqlite(let test): test.close()
        case .postgres(let server, _): server.stop()
        }
    }
}
