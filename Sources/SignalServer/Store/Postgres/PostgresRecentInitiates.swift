import SignalCore

extension PostgresConnection {
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
