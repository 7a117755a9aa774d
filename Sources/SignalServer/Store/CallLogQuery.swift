import SignalProtocol

extension CallLogFilter {
    /// The exclusive upper bound on `seq` for this page: the cursor's seq, or
    /// above every seq for the first page. Fails for a limit out of range
    /// (``StoreErrorCode/badQuery``) or a bad cursor (``StoreErrorCode/badCursor``).
    func seqBound() throws(StoreError) -> Int64 {
        guard CallLogFilter.limitRange.contains(limit) else {
            throw StoreError(
                .badQuery,
                "limit must be \(CallLogFilter.limitRange.lowerBound) to \(CallLogFilter.limitRange.upperBound), not \(limit)"
            )
        }
        guard let cursor else { return Int64.max }
        return try CallLogCursor.decode(cursor)
    }
}

/// The opaque call log cursor: the `seq` of the last entry returned, as 8
/// big-endian bytes in unpadded base64url (11 characters, safe in a URL).
/// Keyset pagination on `seq`: the next page is `seq < cursor`, so calls
/// saved between two fetches (always a higher seq) neither shift nor repeat
/// the older entries.
enum CallLogCursor {
    /// The cursor that continues after the entry stored as `seq`.
    static func encode(_ seq: Int64) -> String {
        Base64.encodeURL((0 ..< 8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: seq) >> (56 - 8 * $0)) })
    }

    /// The seq `cursor` encodes; ``StoreErrorCode/badCursor`` unless it is
    /// exactly what ``encode(_:)`` makes of a positive seq.
    static func decode(_ cursor: String) throws(StoreError) -> Int64 {
        guard let bytes = Base64.decodeURL(cursor), bytes.count == 8 else {
            throw StoreError(.badCursor, "cursor is not one the server issued")
        }
        let seq = Int64(bitPattern: bytes.reduce(0) { $0 << 8 | UInt64($1) })
        guard seq > 0 else { throw StoreError(.badCursor, "cursor is not one the server issued") }
        return seq
    }
}

extension StoreConnection {
    /// One page of `uid`'s history matching `query`, newest first. Reads
    /// `limit + 1` rows to learn whether another page follows. Each
    /// combination of filters has its own SQL text, hence its own cached
    /// statement.
    ///
    /// The page is the newest rows of two scans, each in seq order and cut
    /// at the limit: the calls `uid` made (initiator) and the calls `uid`
    /// received (receiver); a direction filter or `missed` (always incoming)
    /// leaves one of them. Each scan names its index: the party's own, or
    /// `calls_between` when a peer is given, or `calls_missed` for missed
    /// calls (its condition is repeated word for word so SQLite may use the
    /// partial index). Call type and status filter the scan.
    func callLogs(for uid: String, query: CallLogFilter) throws(StoreError) -> CallLogPage {
        let bound = try query.seqBound()
        var parts: [String] = []
        if query.direction != .incoming && !query.missedOnly {
            parts.append(Self.historyScan(party: "initiator", other: "receiver", peer: query.with != nil, query: query))
        }
        if query.direction != .outgoing {
            parts.append(Self.historyScan(party: "receiver", other: "initiator", peer: query.with != nil, query: query))
        }
        guard !parts.isEmpty else { return CallLogPage(logs: [], next: nil) }
        let sql =
            parts.map { "SELECT * FROM (\($0))" }.joined(separator: " UNION ALL ")
            + " ORDER BY \(Self.callColumnCount + 1) DESC LIMIT ?3"

        var logs: [CallLog] = []
        var lastSeq: Int64 = 0
        var next: String?
        // ?4 to ?6 are bound NULL where the text does not use them. The row
        // after a full page only tells that another page follows.
        try database.forEachRow(
            sql, uid, bound, query.limit + 1, query.with, query.callType?.rawValue, query.status?.rawValue
        ) { row throws(StoreError) in
            guard logs.count < query.limit else {
                next = CallLogCursor.encode(lastSeq)
                return false
            }
            logs.append(CallLog(call: try Self.decodeCall(row), for: uid))
            lastSeq = row.int64(Self.callColumnCount)
            return true
        }
        return CallLogPage(logs: logs, next: next)
    }

    /// The SQL of one scan of a history page: the calls where `uid` (?1) is
    /// the `party` column, below the cursor (?2), newest first, at most the
    /// page's limit (?3); with the peer (?4) as the `other` column, the call
    /// type (?5) and the status (?6) when the query has them (a number the
    /// text skips is simply never used).
    private static func historyScan(party: String, other: String, peer: Bool, query: CallLogFilter) -> String {
        let missed = query.missedOnly && party == "receiver"
        let index = peer ? "calls_between" : missed ? "calls_missed" : "calls_by_\(party)"
        var sql = "SELECT \(callColumns), seq FROM calls INDEXED BY \(index) WHERE \(party) = ?1 AND seq < ?2"
        if peer { sql += " AND \(other) = ?4" }
        // A call to oneself (the protocol refuses them) is listed once, as outgoing.
        if party == "receiver" { sql += " AND initiator != ?1" }
        if missed { sql += " AND (status = 'unanswered' OR status = 'cancelled' OR status = 'busy')" }
        if query.callType != nil { sql += " AND call_type = ?5" }
        if query.status != nil { sql += " AND status = ?6" }
        return sql + " ORDER BY seq DESC LIMIT ?3"
    }
}
