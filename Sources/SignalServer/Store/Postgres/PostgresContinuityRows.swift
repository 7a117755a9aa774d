import SignalProtocol

/// What a device continues from, read from PostgreSQL: the calls of a user
/// changed after a position (resume, as
/// ``StoreConnection/changedCalls(of:after:limit:)`` in ContinuityRows.swift).
extension PostgresConnection {
    /// The calls of $1 created after position $2 (their seq is their first
    /// change's position), at most $3 per party column.
    private static let createdAfterSQL = """
        (SELECT \(callColumns), seq FROM calls WHERE initiator = $1 AND seq > $2 ORDER BY seq LIMIT $3)
        UNION ALL
        (SELECT \(callColumns), seq FROM calls WHERE receiver = $1 AND seq > $2 AND initiator != $1
         ORDER BY seq LIMIT $3)
        """

    /// The calls of $1 created at or before position $2, newest first, at most $3.
    private static let createdByAtSQL = """
        (SELECT \(callColumns), seq FROM calls WHERE initiator = $1 AND seq <= $2 ORDER BY seq DESC LIMIT $3)
        UNION ALL
        (SELECT \(callColumns), seq FROM calls WHERE receiver = $1 AND seq <= $2 AND initiator != $1
         ORDER BY seq DESC LIMIT $3)
        ORDER BY seq DESC LIMIT $3
        """

    /// The calls `uid` is a party of that changed after position `seq`,
    /// oldest change first, at most `limit`: the calls created after it, and
    /// the one live call the user may have been in at it (the newest call
    /// created by then that was not busy at once), included when it changed
    /// since. SQLite's reasoning and answers, limits and `exceeded` alike.
    ///
    /// Both reads share one snapshot: read committed would let a call
    /// commit between them and be judged against a history that lacks it.
    /// Inside a cluster transition, which holds the user's lock, none of
    /// the user's calls can change between them, and they run in it.
    func changedCalls(of uid: String, after seq: Int64, limit: Int) throws(StoreError) -> ChangedCalls {
        let (createdAfter, createdByAt) = try reportingPostgresErrors { () throws(PostgresError) in
            let read = { () throws(PostgresError) in
                (
                    try self.execute(Self.createdAfterSQL, [uid, String(seq), String(limit + 1)]),
                    try self.execute(Self.createdByAtSQL, [uid, String(seq), String(limit)])
                )
            }
            return try isInTransaction ? read() : transaction(.readOnlySnapshot, read)
        }
        return ChangedCalls(
            createdAfter: try Self.decodeCalls(createdAfter),
            createdByAt: try Self.decodeCalls(createdByAt, through: ChangedCalls.mayHaveBeenLive),
            after: seq, limit: limit)
    }

    /// The rows of a result selecting ``callColumns`` first, as calls, up
    /// to and including the first that `last` returns true for: the rest
    /// need not be decoded.
    static func decodeCalls(
        _ rows: PostgresRows,
        through last: (Call) -> Bool = { _ in false }
    ) throws(StoreError) -> [Call] {
        var calls: [Call] = []
        for row in 0 ..< rows.count {
            let call = try decodeCall(rows, row)
            calls.append(call)
            if last(call) { break }
        }
        return calls
    }
}
