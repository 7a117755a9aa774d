import SignalCore
import SignalProtocol

@testable import SignalServer

/// The reads a cluster transition made one statement at a time before
/// `ringd_transition` (schema migration 11) made them in one call: the
/// reference its tests compare it with on the same data
/// (``PostgresTransitionReadTests``), and what the store's tests read.
extension PostgresConnection {
    /// The live calls with a party in $1 (a text array), oldest first; the
    /// status condition is that of calls_live_by_initiator and
    /// calls_live_by_receiver word for word, so the planner can use those
    /// partial indexes.
    static let liveCallsOfAnySQL = """
        SELECT \(callColumns) FROM calls
        WHERE (status = 'initiated' OR status = 'ongoing') AND (initiator = ANY($1::text[]) OR receiver = ANY($1::text[]))
        ORDER BY seq
        """

    /// The calls still `initiated` or `ongoing` that one of `uids` is a
    /// party of, oldest first: what a node serving those users continues.
    func liveCalls(ofAny uids: [String]) throws(StoreError) -> [Call] {
        try Self.decodeCalls(
            reportingPostgresErrors { () throws(PostgresError) in
                try execute(Self.liveCallsOfAnySQL, [Self.textArray(uids)])
            })
    }

    /// The connected devices of `uids` on the nodes whose lease of
    /// `leaseMillis` holds. A device of a node whose lease lapsed, declared
    /// dead or not yet, lost its connection with the node: it counts for
    /// nothing (push, `ringing`, device limits) from the moment the lease
    /// ran out, before any node has taken it away. The devices of the node
    /// `keeping` are read all the same: a disconnect's, so that taking a
    /// dead node's device away still runs the disconnect rules.
    func presence(
        of uids: some Collection<String>, leaseMillis: Int64, keeping kept: Int64?
    ) throws(PostgresError) -> [String: [String: DeviceAddress]] {
        // Node numbers start at 1: 0 keeps no node's devices.
        let rows = try execute(
            """
            SELECT p.uid, p.device_id, p.node_id, p.loop, p.connection FROM presence p
            JOIN nodes n ON n.node_id = p.node_id
            WHERE p.uid = ANY($1::text[])
            AND (p.node_id = $3::bigint OR (NOT n.dead AND n.renewed_at >= \(Self.databaseNow) - $2::bigint))
            """, [Self.textArray(Array(uids)), String(leaseMillis), String(kept ?? 0)])
        var devices: [String: [String: DeviceAddress]] = [:]
        for row in 0 ..< rows.count {
            guard let uid = rows.string(row, 0), let deviceId = rows.string(row, 1), let node = rows.int64(row, 2),
                let loop = rows.int64(row, 3), let connection = rows.int64(row, 4)
            else { continue }
            devices[uid, default: [:]][deviceId] = DeviceAddress(
                node: node, loop: Int(loop), connection: UInt64(connection))
        }
        return devices
    }

    /// The running grace period of each of `uids` that has one.
    func graceGenerations(of uids: some Collection<String>) throws(PostgresError) -> [String: UInt64] {
        let rows = try execute(
            """
            SELECT subject, generation FROM timers
            WHERE kind = 'grace' AND subject = ANY($1::text[])
            """, [Self.textArray(Array(uids))])
        var generations: [String: UInt64] = [:]
        for row in 0 ..< rows.count {
            if let uid = rows.string(row, 0), let generation = rows.int64(row, 1) {
                generations[uid] = UInt64(bitPattern: generation)
            }
        }
        return generations
    }

    /// The first of the ``positionsPerTransition`` positions of the change
    /// sequence the transition may hand out.
    func nextSeq() throws(PostgresError) -> Int64 {
        guard let seq = try execute("SELECT nextval('change_seq')").int64(0, 0) else {
            throw PostgresError(sqlState: nil, message: "nextval returned nothing")
        }
        return seq
    }

    /// What `uid`'s recently placed calls tell an `initiateCall` at `now`
    /// (wall clock), as the machine on one node remembers it: when its
    /// newest `limit` calls within the window were placed (none for a
    /// `limit` of 0), and the call it placed with `clientCallId` while that
    /// is live or its ring deadline has not passed. Both read by initiator
    /// (indexes `calls_by_initiated_at`, `calls_by_client_call_id`).
    func recentInitiates(
        of uid: String, clientCallId: String?, limit: Int, now: Int64
    ) throws(StoreError) -> RecentInitiates {
        var recent = RecentInitiates()
        try reportingPostgresErrors { () throws(PostgresError) in
            if limit > 0 {
                let rows = try execute(
                    """
                    SELECT initiated_at FROM calls WHERE initiator = $1 AND initiated_at > $2
                    ORDER BY initiated_at DESC LIMIT $3
                    """, [uid, String(now - RecentInitiates.windowMillis), String(limit)])
                recent.placedAt = (0 ..< rows.count).compactMap { rows.int64($0, 0) }.reversed()
            }
        }
        guard let clientCallId else { return recent }
        let rows = try reportingPostgresErrors { () throws(PostgresError) in
            try execute(
                """
                SELECT \(Self.callColumns) FROM calls
                WHERE initiator = $1 AND client_call_id = $2
                  AND (status = 'initiated' OR status = 'ongoing' OR initiated_at + timeout_ms > $3)
                ORDER BY initiated_at DESC LIMIT 1
                """, [uid, clientCallId, String(now)])
        }
        if rows.count > 0 { recent.calls[clientCallId] = try Self.decodeCall(rows, 0) }
        return recent
    }
}
