/// Token revocations in PostgreSQL's `revocations` table, as
/// ``StoreConnection`` keeps them in SQLite.
extension PostgresConnection {
    /// Records that tokens of `uid` issued at or before `revokedAt` are
    /// invalid. A revocation only moves forward: an older one, from a node
    /// that learned of it late, changes nothing.
    func saveRevocation(uid: String, revokedAt: Int64) throws(StoreError) {
        try reportingPostgresErrors { () throws(PostgresError) in
            try execute(
                """
                INSERT INTO revocations (uid, revoked_at) VALUES ($1, $2)
                ON CONFLICT (uid) DO UPDATE SET revoked_at = greatest(revocations.revoked_at, excluded.revoked_at)
                """, [uid, String(revokedAt)])
        }
    }

    /// Every revocation: uid to the time before which its tokens are invalid.
    func revocations() throws(StoreError) -> [String: Int64] {
        let rows = try reportingPostgresErrors { () throws(PostgresError) in
            try execute("SELECT uid, revoked_at FROM revocations")
        }
        var revocations: [String: Int64] = [:]
        for row in 0 ..< rows.count {
            guard let uid = rows.string(row, 0), let revokedAt = rows.int64(row, 1) else {
                throw StoreError(.corruptRow, "a revocation row lacks its uid or time")
            }
            revocations[uid] = revokedAt
        }
        return revocations
    }
}
