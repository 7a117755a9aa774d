import SignalCore
import SignalProtocol

/// The devices' push tokens in PostgreSQL's `push_tokens`, with the rules
/// of ``StoreConnection``'s in SQLite (PushTokenRows.swift): one token per
/// device, a token on one device at a time, at most `limit` per user.
extension PostgresConnection {
    private static let pushTokenColumns = "uid, device_id, platform, token, topic, environment, updated_at, alert_token"

    /// The values of `token` as `$1…$8`, in ``pushTokenColumns``' order.
    static func parameters(of token: RegisteredPushToken) -> [String?] {
        let registration = token.registration
        return [
            token.uid, token.deviceId, registration.platform.rawValue, registration.token, registration.topic,
            registration.environment?.rawValue, String(token.updatedAt), registration.alertToken,
        ]
    }

    /// Stores `token` as its device's (see ``StoreConnection/save(_:limit:)``),
    /// inside the caller's transaction. The user's advisory lock keeps two
    /// nodes saving for one user from both keeping `limit` tokens. Taking
    /// the token from another user's device locks that user's row, so two
    /// users' devices swapping tokens at once can wait for each other in a
    /// cycle: PostgreSQL fails one with `deadlock_detected`, for the caller
    /// to run again (``PushTokenStore/save(_:limit:completion:)`` does).
    func savePushToken(_ token: RegisteredPushToken, limit: Int) throws(PostgresError) -> PushTokenSaved {
        try lockUsers([token.uid])
        let registration = token.registration
        let holders = try execute(
            """
            DELETE FROM push_tokens WHERE platform = $1 AND token = $2 AND NOT (uid = $3 AND device_id = $4)
            RETURNING uid, device_id
            """, [registration.platform.rawValue, registration.token, token.uid, token.deviceId])
        let movedFrom = (0 ..< holders.count).map {
            PushDeviceKey(uid: holders.string($0, 0) ?? "", deviceId: holders.string($0, 1) ?? "")
        }
        try execute(
            """
            INSERT INTO push_tokens (\(Self.pushTokenColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (uid, device_id) DO UPDATE SET platform = excluded.platform, token = excluded.token,
                topic = excluded.topic, environment = excluded.environment, updated_at = excluded.updated_at,
                alert_token = excluded.alert_token
            """, Self.parameters(of: token))
        let evicted = try execute(
            """
            DELETE FROM push_tokens WHERE uid = $1 AND device_id IN (
                SELECT device_id FROM push_tokens WHERE uid = $1 AND device_id != $2
                ORDER BY updated_at DESC, device_id COLLATE "C" OFFSET $3)
            RETURNING device_id
            """, [token.uid, token.deviceId, String(max(0, limit - 1))])
        let dropped = (0 ..< evicted.count).map { PushDeviceKey(uid: token.uid, deviceId: evicted.string($0, 0) ?? "") }
        return PushTokenSaved(token: token, movedFrom: movedFrom, evicted: dropped)
    }

    /// Removes the device's token; with `only`, only while it is still that
    /// registration (a purge must not remove one registered since). Whether a row went.
    func deletePushToken(
        of device: PushDeviceKey, only registration: RegisteredPushToken? = nil
    ) throws(PostgresError) -> Bool {
        try execute(
            """
            DELETE FROM push_tokens WHERE uid = $1 AND device_id = $2
                AND ($3::text IS NULL OR (token = $3 AND updated_at <= $4::bigint))
            RETURNING uid
            """,
            [device.uid, device.deviceId, registration?.registration.token, registration.map { String($0.updatedAt) }]
        )
        .count > 0
    }

    /// Forgets the device's alert token while the device still has that
    /// registration (see ``StoreConnection/clearAlertToken(of:only:)``).
    func clearAlertToken(of device: PushDeviceKey, only registration: RegisteredPushToken) throws(PostgresError) -> Bool
    {
        try execute(
            """
            UPDATE push_tokens SET alert_token = NULL
            WHERE uid = $1 AND device_id = $2 AND token = $3 AND alert_token = $4 AND updated_at <= $5::bigint
            RETURNING uid
            """,
            [
                device.uid, device.deviceId, registration.registration.token, registration.registration.alertToken,
                String(registration.updatedAt),
            ]
        )
        .count > 0
    }

    /// How many tokens one statement of ``pushTokens(of:page:)`` reads.
    static let pushTokenPage = 1000

    /// The stored tokens of `uids`, or every one. A row this build cannot
    /// read is skipped with a warning, as SQLite's are.
    ///
    /// Every one is read `page` at a time, in the primary key's order, each
    /// page a statement of its own: one statement over the whole table
    /// would have to finish within the statement timeout however many
    /// tokens there are. The pages are not one snapshot; the listener reads
    /// them after it listens, so a token that changes meanwhile is read
    /// again on its notification.
    func pushTokens(of uids: [String]? = nil, page: Int = pushTokenPage) throws(StoreError) -> [RegisteredPushToken] {
        if let uids {
            return try Self.pushTokens(
                in: try reportingPostgresErrors { () throws(PostgresError) in
                    try execute(
                        "SELECT \(Self.pushTokenColumns) FROM push_tokens WHERE uid = ANY($1::text[])",
                        [Self.textArray(uids)])
                })
        }
        var tokens: [RegisteredPushToken] = []
        var after: (uid: String, deviceId: String)?
        while true {
            let rows = try reportingPostgresErrors { () throws(PostgresError) in
                try execute(
                    """
                    SELECT \(Self.pushTokenColumns) FROM push_tokens
                    WHERE $1::text IS NULL OR (uid, device_id) > ($1, $2) ORDER BY uid, device_id LIMIT $3
                    """, [after?.uid, after?.deviceId, String(page)])
            }
            tokens += Self.pushTokens(in: rows)
            guard rows.count == page, let uid = rows.string(rows.count - 1, 0),
                let deviceId = rows.string(rows.count - 1, 1)
            else { return tokens }
            after = (uid, deviceId)
        }
    }

    private static func pushTokens(in rows: PostgresRows) -> [RegisteredPushToken] {
        (0 ..< rows.count).compactMap { row in
            PushTokenRowValues(
                uid: rows.string(row, 0) ?? "", deviceId: rows.string(row, 1) ?? "",
                platform: rows.string(row, 2), token: rows.string(row, 3), topic: rows.string(row, 4),
                environment: rows.string(row, 5), alertToken: rows.string(row, 7), updatedAt: rows.int64(row, 6) ?? 0
            )
            .decoded(by: "cluster store")
        }
    }
}
