import SignalProtocol

/// Users' profiles and do-not-disturb in `users`: a row exists only while
/// something is set. Not links of the change chain: a profile is not a call change.
extension StoreConnection {
    private static let userByUidSQL = "SELECT \(UserRowValues.columns) FROM users WHERE uid = ?1"

    func user(uid: String) throws(StoreError) -> UserRecord? {
        try database.fetchOne(Self.userByUidSQL, uid, decode: Self.decodeUser)
    }

    /// Every stored record (a node's machine holds them all).
    func users() throws(StoreError) -> [UserRecord] {
        try database.fetchAll("SELECT \(UserRowValues.columns) FROM users ORDER BY uid", decode: Self.decodeUser)
    }

    /// Applies `change` to `uid`'s record (an empty one when none is
    /// stored) in the writer's transaction, and stores the result, or
    /// removes the row when it sets nothing. Returns the record before and after.
    func updateUser(
        uid: String, at now: Int64, _ change: (inout UserRecord) -> Void
    ) throws(StoreError) -> (before: UserRecord, after: UserRecord) {
        let before = try user(uid: uid) ?? UserRecord(uid: uid, updatedAt: now)
        var after = before
        change(&after)
        after.updatedAt = now
        if after.isEmpty {
            try database.execute("DELETE FROM users WHERE uid = ?1", uid)
        } else {
            let row = UserRowValues(after)
            try database.execute(
                """
                INSERT INTO users (\(UserRowValues.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT (uid) DO UPDATE SET name = excluded.name, avatar_url = excluded.avatar_url,
                    metadata = excluded.metadata, dnd_mode = excluded.dnd_mode, dnd_until = excluded.dnd_until,
                    updated_at = excluded.updated_at
                """, row.uid, row.name, row.avatarUrl, row.metadata, row.doNotDisturbMode, row.doNotDisturbUntil,
                row.updatedAt)
        }
        return (before, after)
    }

    private static func decodeUser(_ row: SQLiteRow) throws(StoreError) -> UserRecord {
        try UserRowValues(
            uid: row.string(0), name: row.optionalString(1), avatarUrl: row.optionalString(2),
            metadata: row.optionalString(3), doNotDisturbMode: row.optionalString(4),
            doNotDisturbUntil: row.optionalInt64(5), updatedAt: row.int64(6)
        ).decoded()
    }
}
