import SignalCore
import SignalProtocol

/// What saving a push token did: the token as stored, the devices that
/// held the same token before (it moved from them), and the user's devices
/// whose tokens went to keep within the limit.
struct PushTokenSaved: Sendable {
    var token: RegisteredPushToken
    var movedFrom: [PushDeviceKey]
    var evicted: [PushDeviceKey] = []
}

/// The devices' push tokens in `push_tokens`.
extension StoreConnection {
    private static let columns = "uid, device_id, platform, token, topic, environment, updated_at, alert_token"

    /// Stores `token` as its device's, replacing the device's previous one,
    /// and takes it from any other device that held it. A user keeps at most
    /// `limit` tokens: those registered longest ago go first (a reinstalled
    /// app comes back as a new device and never unregistered the old one).
    func save(_ token: RegisteredPushToken, limit: Int) throws(StoreError) -> PushTokenSaved {
        let movedFrom = try database.fetchAll(
            """
            DELETE FROM push_tokens WHERE platform = ?1 AND token = ?2 AND NOT (uid = ?3 AND device_id = ?4)
            RETURNING uid, device_id
            """, token.registration.platform.rawValue, token.registration.token, token.uid, token.deviceId
        ) { row in PushDeviceKey(uid: row.string(0), deviceId: row.string(1)) }
        try database.execute(
            """
            INSERT INTO push_tokens (\(Self.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            ON CONFLICT (uid, device_id) DO UPDATE SET platform = excluded.platform, token = excluded.token,
                topic = excluded.topic, environment = excluded.environment, updated_at = excluded.updated_at,
                alert_token = excluded.alert_token
            """, token.uid, token.deviceId, token.registration.platform.rawValue, token.registration.token,
            token.registration.topic, token.registration.environment?.rawValue, token.updatedAt,
            token.registration.alertToken)
        let evicted = try database.fetchAll(
            """
            DELETE FROM push_tokens WHERE uid = ?1 AND device_id IN (
                SELECT device_id FROM push_tokens WHERE uid = ?1 AND device_id != ?2
                ORDER BY updated_at DESC, device_id LIMIT -1 OFFSET ?3)
            RETURNING device_id
            """, token.uid, token.deviceId, max(0, limit - 1)
        ) { row in PushDeviceKey(uid: token.uid, deviceId: row.string(0)) }
        return PushTokenSaved(token: token, movedFrom: movedFrom, evicted: evicted)
    }

    /// Removes the device's token; with `only`, only while it is still that
    /// registration (a purge must not remove a token registered since, even
    /// the same one again). Whether a row went.
    func deletePushToken(
        of device: PushDeviceKey, only registration: RegisteredPushToken? = nil
    ) throws(StoreError) -> Bool {
        try database.execute(
            """
            DELETE FROM push_tokens WHERE uid = ?1 AND device_id = ?2
                AND (?3 IS NULL OR (token = ?3 AND updated_at <= ?4))
            """, device.uid, device.deviceId, registration?.registration.token, registration?.updatedAt) > 0
    }

    /// Forgets the device's alert token, only while the device still has
    /// that registration: APNs called the alert token dead, and the VoIP
    /// token beside it still rings. Whether the row changed.
    func clearAlertToken(of device: PushDeviceKey, only registration: RegisteredPushToken) throws(StoreError) -> Bool {
        try database.execute(
            """
            UPDATE push_tokens SET alert_token = NULL
            WHERE uid = ?1 AND device_id = ?2 AND token = ?3 AND alert_token = ?4 AND updated_at <= ?5
            """, device.uid, device.deviceId, registration.registration.token, registration.registration.alertToken,
            registration.updatedAt) > 0
    }

    /// Every stored token. A row this build cannot read is skipped with a
    /// warning (``PushTokenRowValues/decoded(by:)``).
    func pushTokens() throws(StoreError) -> [RegisteredPushToken] {
        var tokens: [RegisteredPushToken] = []
        try database.forEachRow("SELECT \(Self.columns) FROM push_tokens") { row in
            let values = PushTokenRowValues(
                uid: row.string(0), deviceId: row.string(1), platform: row.optionalString(2),
                token: row.optionalString(3), topic: row.optionalString(4), environment: row.optionalString(5),
                alertToken: row.optionalString(7), updatedAt: row.int64(6))
            if let token = values.decoded(by: "call store") { tokens.append(token) }
            return true
        }
        return tokens
    }
}
