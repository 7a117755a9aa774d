import SignalProtocol

/// Call history pages from PostgreSQL: the pages and cursors of
/// ``StoreConnection/callLogs(for:query:)`` (CallLogQuery.swift), so a
/// client cannot tell which backend served it, and a cursor one issued
/// continues alike on the other.
extension PostgresConnection {
    /// One page of `uid`'s history matching `query`, newest first, with the
    /// cursor of the next when one follows (`limit + 1` rows are read to
    /// learn that). Refuses the limits and cursors SQLite refuses, with the
    /// same errors.
    ///
    /// As in SQLite, the page is the newest rows of two scans in seq order,
    /// each cut at the limit: the calls `uid` made and the calls `uid`
    /// received, one of them with a direction filter or `missed` (always
    /// incoming). PostgreSQL has no `INDEXED BY`; the indexes are SQLite's,
    /// and the missed condition is calls_missed's word for word so the
    /// planner can prove the partial index applies.
    func callLogs(for uid: String, query: CallLogFilter) throws(StoreError) -> CallLogPage {
        let bound = try query.seqBound()
        // PostgreSQL must infer a type for every parameter it is given, so
        // the optional filters take the numbers after $3 that are used.
        var parameters: [String?] = [uid, String(bound), String(query.limit + 1)]
        func bind(_ value: String) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        let filters = HistoryFilters(
            peer: query.with.map(bind), callType: query.callType.map { bind($0.rawValue) },
            status: query.status.map { bind($0.rawValue) })
        var scans: [String] = []
        if query.direction != .incoming && !query.missedOnly {
            scans.append(Self.historyScan(party: "initiator", other: "receiver", missed: false, filters))
        }
        if query.direction != .outgoing {
            scans.append(Self.historyScan(party: "receiver", other: "initiator", missed: query.missedOnly, filters))
        }
        guard !scans.isEmpty else { return CallLogPage(logs: [], next: nil) }
        // A lone parenthesized scan takes no second ORDER BY: it is wrapped.
        let sql = "SELECT * FROM (\(scans.joined(separator: " UNION ALL "))) AS page ORDER BY seq DESC LIMIT $3"

        let rows = try reportingPostgresErrors { () throws(PostgresError) in try execute(sql, parameters) }
        var logs: [CallLog] = []
        var lastSeq: Int64 = 0
        for row in 0 ..< min(rows.count, query.limit) {
            logs.append(CallLog(call: try Self.decodeCall(rows, row), for: uid))
            guard let seq = rows.int64(row, Self.callColumnCount) else {
                throw StoreError(.corruptRow, "a call row lacks its seq")
            }
            lastSeq = seq
        }
        return CallLogPage(logs: logs, next: rows.count > query.limit ? CallLogCursor.encode(lastSeq) : nil)
    }

    /// The placeholders of the optional filters a query has.
    private struct HistoryFilters {
        var peer: String?
        var callType: String?
        var status: String?
    }

    /// One scan of a history page: the calls where `uid` ($1) is the `party`
    /// column, below the cursor ($2), newest first, at most the page's limit
    /// ($3), with the `filters` the query has; `missed`, only the incoming
    /// calls that count as missed.
    private static func historyScan(party: String, other: String, missed: Bool, _ filters: HistoryFilters) -> String {
        var sql = "SELECT \(callColumns), seq FROM calls WHERE \(party) = $1 AND seq < $2"
        if let peer = filters.peer { sql += " AND \(other) = \(peer)" }
        // A call to oneself (the protocol refuses them) is listed once, as outgoing.
        if party == "receiver" { sql += " AND initiator != $1" }
        if missed { sql += " AND (status = 'unanswered' OR status = 'cancelled' OR status = 'busy')" }
        if let callType = filters.callType { sql += " AND call_type = \(callType)" }
        if let status = filters.status { sql += " AND status = \(status)" }
        return "(\(sql) ORDER BY seq DESC LIMIT $3)"
    }
}
