import SignalProtocol

/// The reads and the batched insert `migrate-store` needs of each store.
extension StoreConnection {
    /// Up to `limit` calls after position `seq` in seq order, each with its
    /// seq (``Call/seq`` is the position of its latest change).
    func calls(after seq: Int64, limit: Int) throws(StoreError) -> [(call: Call, seq: Int64)] {
        try database.fetchAll(
            """
            SELECT \(Self.callColumns), seq FROM calls WHERE seq > ?1 ORDER BY seq LIMIT ?2
            """, seq, limit
        ) { row throws(StoreError) in (try Self.decodeCall(row), row.int64(Self.callColumnCount)) }
    }

    /// The highest position a call holds. Above the counter of the
    /// sequence only in a store whose counter lags (it never should).
    func highestCallPosition() throws(StoreError) -> Int64 {
        try database.scalarInt64("SELECT coalesce(max(max(seq), max(change_seq)), 0) FROM calls") ?? 0
    }
}

extension PostgresConnection {
    /// Runs `head VALUES (…), (…) tail` with `rows` (all of one width)
    /// bound in order: one round trip for the lot. INSERT coerces each
    /// text parameter to its column's type.
    func insert(_ head: String, rows: [[String?]], then tail: String = "") throws(PostgresError) {
        guard let width = rows.first?.count else { return }
        var sql = head + " VALUES "
        sql.reserveCapacity(head.count + rows.count * width * 6 + tail.count)
        for row in 0 ..< rows.count {
            sql += row == 0 ? "(" : ", ("
            sql += (1 ... width).map { "$\(row * width + $0)" }.joined(separator: ", ")
            sql += ")"
        }
        try execute(sql + " " + tail, rows.flatMap { $0 })
    }
}
