import SignalProtocol

extension CallLogFilter {
    /// The exclusive upper bound on `seq` for this page: the cursor's seq, or
    /// above every seq for the first page. Fails for a limit out of range
    /// (``StoreErrorCode/badQuery``) or a bad cursor (``StoreErrorCode/badCursor``).
    func seqBound() throws(StoreError) -> Int64 {
        guard CallLogFilter.limitRange.contains(limit) else {
            throw StoreError(.badQuery, "limit must be \(CallLogFilter.limitRange.lowerBound) to \(CallLogFilter.limitRange.upperBound), not \(limit)")
        }
        guard let cursor else { return Int64.max }
        return try CallLogCursor.decode(cursor)
    }
}

/// One page of a user's call history, newest first.
public struct CallLogPage: Hashable, Sendable {
    /// The entries, newest first.
    public var logs: [CallLog]
    /// The cursor of the following (older) page; nil when this page is the last.
    public var next: String?

    /// A page of `logs`, continued by `next`.
    public init(logs: [CallLog], next: String?) {
        self.logs = logs
        self.next = next
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
    /// One page of `uid`'s history matching `query`, newest first (ORDER BY
    /// seq DESC). Reads `limit + 1` rows to learn whether another page follows.
    /// Each combination of filters has its own SQL text, hence its own cached
    /// statement (32 at most).
    ///
    /// Without statistics SQLite prefers the primary key scan, which yields
    /// seq order with no sort, even when a filter has an index; so the query
    /// names the index of its most selective filter: peer, then missed, then
    /// status. Each of them yields the matching rows in seq order too, so the
    /// LIMIT still ends the scan early. Direction and call type filter
    /// whichever scan runs. The entry's direction and missed flag follow from
    /// the call (as when they were saved), so the call_log row itself is
    /// never read: the peer and status indexes cover the query.
    func callLogs(for uid: String, query: CallLogFilter) throws(StoreError) -> CallLogPage {
        let bound = try query.seqBound()
        let index = query.with != nil ? " INDEXED BY call_log_peer"
            : query.missedOnly ? " INDEXED BY call_log_missed"
            : query.status != nil ? " INDEXED BY call_log_status" : ""
        // CROSS JOIN keeps call_log as the outer loop, in index order.
        var sql = """
            SELECT \(Self.callColumns(prefix: "c.")), l.seq
            FROM call_log AS l\(index) CROSS JOIN calls AS c ON c.seq = l.seq
            WHERE l.uid = ?1 AND l.seq < ?2
            """
        var values: [String] = []
        func filter(_ column: String, _ value: String?) {
            guard let value else { return }
            values.append(value)
            sql += " AND l.\(column) = ?\(values.count + 3)"
        }
        filter("call_type", query.callType?.rawValue)
        filter("status", query.status?.rawValue)
        // A literal, not a parameter: only then can SQLite use the partial index.
        if query.missedOnly { sql += " AND l.missed = 1" }
        filter("direction", query.direction?.rawValue)
        filter("peer", query.with)
        sql += " ORDER BY l.seq DESC LIMIT ?3"

        let statement = try reportingSQLiteErrors { () throws(SQLiteError) in
            let statement = try database.statement(sql)
            try statement.bind(uid, at: 1)
            try statement.bind(bound, at: 2)
            try statement.bind(Int64(query.limit + 1), at: 3)
            for (offset, value) in values.enumerated() { try statement.bind(value, at: Int32(offset + 4)) }
            return statement
        }
        defer { statement.reset() }
        var logs: [CallLog] = []
        var lastSeq: Int64 = 0
        while logs.count < query.limit, try reportingSQLiteErrors({ () throws(SQLiteError) in try statement.step() }) == .row {
            logs.append(CallLog(call: try Self.decodeCall(statement), for: uid))
            lastSeq = statement.int64(at: 13)
        }
        var next: String?
        if logs.count == query.limit, try reportingSQLiteErrors({ () throws(SQLiteError) in try statement.step() }) == .row {
            next = CallLogCursor.encode(lastSeq)
        }
        return CallLogPage(logs: logs, next: next)
    }
}
