import SignalCore
import SignalProtocol

/// What a cluster transition reads under its users' locks, from one call
/// of `ringd_transition` (schema migration 11): the rows are those the
/// separate queries of PostgresClusterRows.swift, PostgresContinuityRows.swift,
/// PostgresUserRows.swift and PostgresRecentInitiates.swift return, tagged
/// by kind in the last column, and decoded here by the same decoders.
struct PostgresTransitionRead {
    /// The users whose locks the transaction holds.
    var locked: Set<String> = []
    /// Not empty when a live call named users the function had not locked:
    /// every user to lock, the transaction's next try (it holds nothing to
    /// keep: roll back first, so locks are only ever taken in key order).
    var retry: Set<String> = []
    var calls: [Call] = []
    /// The session's call when it is not live (an answer names its state).
    var stored: Call?
    /// The connected devices of the locked users on the nodes whose lease
    /// holds. A device of a node whose lease lapsed, declared dead or not
    /// yet, lost its connection with the node: it counts for nothing (push,
    /// `ringing`, device limits) from the moment the lease ran out, before
    /// any node has taken it away. The devices of the request's `keptNode`
    /// are read all the same: a disconnect's, so that taking a dead node's
    /// device away still runs the disconnect rules.
    var devices: [String: [String: DeviceAddress]] = [:]
    var graces: [String: UInt64] = [:]
    /// The first of the transition's ``PostgresConnection/positionsPerTransition`` positions.
    var seq: Int64 = 0
    var users: [UserRecord] = []
    /// The initiator's recent calls, for an `initiateCall`.
    var recent = RecentInitiates()

    /// What the transition of an input asks for.
    struct Request {
        /// Users the input names.
        var users: Set<String>
        /// A call the input names, whose parties are locked too.
        var sessionId: String?
        var leaseMillis: Int64
        /// The node whose devices count though its lease lapsed (a disconnect's).
        var keptNode: Int64?
        var readsUsers = false
        /// For an `initiateCall`: the caller, its call id, how many of its
        /// recent calls count (0: none), at `now` (wall clock, ms).
        var initiator: String?
        var clientCallId: String?
        var initiateLimit = 0
        var now: Int64 = 0
    }

    /// The statement that reads `request` (a `SELECT` of the function).
    static func statement(_ request: Request) -> PostgresPipeline.Statement {
        PostgresPipeline.Statement(
            sql: "SELECT * FROM ringd_transition($1::text[], $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            parameters: [
                PostgresConnection.textArray(request.users.sorted()), request.sessionId, String(request.leaseMillis),
                String(request.keptNode ?? 0), request.readsUsers ? "true" : "false", request.initiator,
                request.clientCallId, String(request.initiateLimit),
                String(request.now - RecentInitiates.windowMillis), String(request.now),
            ])
    }

    /// The column that tags each row: after the calls' columns.
    private static let kindColumn = PostgresConnection.callColumnCount

    /// Decodes the function's `rows`; fails on a row this build cannot read.
    init(_ rows: PostgresRows) throws(StoreError) {
        var placed: [Int64] = []
        for row in 0 ..< rows.count {
            switch rows.string(row, Self.kindColumn) {
            case "retry": retry.insert(rows.string(row, 0) ?? "")
            case "locked": locked.insert(rows.string(row, 0) ?? "")
            case "call": calls.append(try PostgresConnection.decodeCall(rows, row))
            case "stored": stored = try PostgresConnection.decodeCall(rows, row)
            case "device":
                guard let uid = rows.string(row, 0), let deviceId = rows.string(row, 1), let node = rows.int64(row, 2),
                    let loop = rows.int64(row, 3), let connection = rows.int64(row, 4)
                else { continue }
                devices[uid, default: [:]][deviceId] = DeviceAddress(
                    node: node, loop: Int(loop), connection: UInt64(connection))
            case "grace":
                if let uid = rows.string(row, 0), let generation = rows.int64(row, 1) {
                    graces[uid] = UInt64(bitPattern: generation)
                }
            case "seq": seq = rows.int64(row, 0) ?? 0
            case "user": users.append(try PostgresConnection.decodeUser(rows, row))
            case "placed": placed += rows.int64(row, 0).map { [$0] } ?? []
            case "retried":
                let call = try PostgresConnection.decodeCall(rows, row)
                if let id = call.clientCallId { recent.calls[id] = call }
            default:
                throw StoreError(.corruptRow, "ringd_transition returned a row of an unknown kind")
            }
        }
        recent.placedAt = placed
        guard !retry.isEmpty || seq > 0 else {
            throw StoreError(.database, "ringd_transition returned no change position")
        }
    }
}
