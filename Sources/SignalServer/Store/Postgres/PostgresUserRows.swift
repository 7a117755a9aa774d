import SignalProtocol

/// Users' profiles and do-not-disturb in PostgreSQL's `users`, as in
/// SQLite (UserRows.swift): a row only while something is set.
extension PostgresConnection {
    private static let usersOfAnySQL = "SELECT \(UserRowValues.columns) FROM users WHERE uid = ANY($1::text[])"

    func user(uid: String) throws(StoreError) -> UserRecord? {
        try users(ofAny: [uid]).first
    }

    /// The stored records of `uids` (a transition reads its users' records).
    func users(ofAny uids: [String]) throws(StoreError) -> [UserRecord] {
        let rows = try reportingPostgresErrors { () throws(PostgresError) in
            try execute(Self.usersOfAnySQL, [Self.textArray(uids)])
        }
        var records: [UserRecord] = []
        for row in 0 ..< rows.count { records.append(try Self.decodeUser(rows, row)) }
        return records
    }

    /// The ``UserRecord`` in row `row` of a result selecting ``UserRowValues/columns``.
    static func decodeUser(_ rows: PostgresRows, _ row: Int) throws(StoreError) -> UserRecord {
        guard let uid = rows.string(row, 0), let updatedAt = rows.int64(row, 6) else {
            throw StoreError(.corruptRow, "a users row lacks its uid or time")
        }
        return try UserRowValues(
            uid: uid, name: rows.string(row, 1), avatarUrl: rows.string(row, 2), metadata: rows.string(row, 3),
            doNotDisturbMode: rows.string(row, 4), doNotDisturbUntil: rows.int64(row, 5), updatedAt: updatedAt
        ).decoded()
    }

    /// Applies `change` to `uid`'s record in a transaction holding the
    /// user's lock (the one every transition of the user holds, so no
    /// transition decides between the read and the write), and stores the
    /// result, or removes the row when it sets nothing.
    func updateUser(
        uid: String, at now: Int64, _ change: (inout UserRecord) -> Void
    ) throws(StoreError) -> (before: UserRecord, after: UserRecord) {
        try reportingPostgresErrors { () throws(PostgresError) in try execute("BEGIN") }
        do throws(StoreError) {
            try reportingPostgresErrors { () throws(PostgresError) in try lockUsers([uid]) }
            let before = try user(uid: uid) ?? UserRecord(uid: uid, updatedAt: now)
            var after = before
            change(&after)
            after.updatedAt = now
            try reportingPostgresErrors { () throws(PostgresError) in
                if after.isEmpty {
                    try execute("DELETE FROM users WHERE uid = $1", [uid])
                } else {
                    let row = UserRowValues(after)
                    try execute(
                        """
                        INSERT INTO users (\(UserRowValues.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7)
                        ON CONFLICT (uid) DO UPDATE SET name = excluded.name, avatar_url = excluded.avatar_url,
                            metadata = excluded.metadata, dnd_mode = excluded.dnd_mode,
                            dnd_until = excluded.dnd_until, updated_at = excluded.updated_at
                        """,
                        [
                            row.uid, row.name, row.avatarUrl, row.metadata, row.doNotDisturbMode,
                            row.doNotDisturbUntil.map { String($0) }, String(row.updatedAt),
                        ])
                }
                try execute("COMMIT")
            }
            return (before, after)
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }
}
