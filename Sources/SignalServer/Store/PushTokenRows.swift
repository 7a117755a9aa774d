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
    private static let columns = "uid, device_id, platform, token, topic, environment, updated_at"

    /// Stores `token` as its device's, replacing the device's previous one,
    /// and takes it from any other device that held it. A user keeps at most
    /// `limit` tokens: those registered longest ago go first (a reinstalled
    /// app comes back as a new device and never unregistered the old one).
    func save(_ token: RegisteredPushToken, limit: Int) throws(StoreError) -> PushTokenSaved {
        try reportingSQLiteErrors { () throws(SQLiteError) in
            let holders = try database.statement(
                """
                DELETE FROM push_tokens WHERE platform = ?1 AND token = ?2 AND NOT (uid = ?3 AND device_id = ?4)
                RETURNING uid, device_id
                """)
            defer { holders.reset() }
            try holders.bind(token.registration.platform.rawValue, at: 1)
            try holders.bind(token.registration.token, at: 2)
            try holders.bind(token.uid, at: 3)
            try holders.bind(token.deviceId, at: 4)
            var movedFrom: [PushDeviceKey] = []
            while try holders.step() == .row {
                movedFrom.append(PushDeviceKey(uid: holders.string(at: 0) ?? "", deviceId: holders.string(at: 1) ?? ""))
            }
            holders.reset()
            let upsert = try database.statement(
                """
                INSERT INTO push_tokens (\(Self.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT (uid, device_id) DO UPDATE SET platform = excluded.platform, token = excluded.token,
                    topic = excluded.topic, environment = excluded.environment, updated_at = excluded.updated_at
                """)
            try upsert.bind(token.uid, at: 1)
            try upsert.bind(token.deviceId, at: 2)
            try upsert.bind(token.registration.platform.rawValue, at: 3)
            try upsert.bind(token.registration.token, at: 4)
            try upsert.bind(token.registration.topic, at: 5)
            try upsert.bind(token.registration.environment?.rawValue, at: 6)
            try upsert.bind(token.updatedAt, at: 7)
            try upsert.run()
            let evicted = try database.statement(
                """
                DELETE FROM push_tokens WHERE uid = ?1 AND device_id IN (
                    SELECT device_id FROM push_tokens WHERE uid = ?1 AND device_id != ?2
                    ORDER BY updated_at DESC, device_id LIMIT -1 OFFSET ?3)
                RETURNING device_id
                """)
            defer { evicted.reset() }
            try evicted.bind(token.uid, at: 1)
            try evicted.bind(token.deviceId, at: 2)
            try evicted.bind(Int64(max(0, limit - 1)), at: 3)
            var dropped: [PushDeviceKey] = []
            while try evicted.step() == .row {
                dropped.append(PushDeviceKey(uid: token.uid, deviceId: evicted.string(at: 0) ?? ""))
            }
            return PushTokenSaved(token: token, movedFrom: movedFrom, evicted: dropped)
        }
    }

    /// Removes the device's token; with `only`, only while it is still that
    /// registration (a purge must not remove a token registered since, even
    /// the same one again). Whether a row went.
    func deletePushToken(
        of device: PushDeviceKey, only registration: RegisteredPushToken? = nil
    ) throws(StoreError) -> Bool {
        try reportingSQLiteErrors { () throws(SQLiteError) in
            let statement = try database.statement(
                """
                DELETE FROM push_tokens WHERE uid = ?1 AND device_id = ?2
                    AND (?3 IS NULL OR (token = ?3 AND updated_at <= ?4))
                """)
            try statement.bind(device.uid, at: 1)
            try statement.bind(device.deviceId, at: 2)
            try statement.bind(registration?.registration.token, at: 3)
            try statement.bind(registration?.updatedAt, at: 4)
            try statement.run()
            return database.changes > 0
        }
    }

    /// Every stored token. A row this build cannot read is skipped with a
    /// warning (``PushTokenRowValues/decoded(by:)``).
    func pushTokens() throws(StoreError) -> [RegisteredPushToken] {
        try reportingSQLiteErrors { () throws(SQLiteError) in
            let statement = try database.statement("SELECT \(Self.columns) FROM push_tokens")
            defer { statement.reset() }
            var tokens: [RegisteredPushToken] = []
            while try statement.step() == .row {
                let values = PushTokenRowValues(
                    uid: statement.string(at: 0) ?? "", deviceId: statement.string(at: 1) ?? "",
                    platform: statement.string(at: 2), token: statement.string(at: 3), topic: statement.string(at: 4),
                    environment: statement.string(at: 5), updatedAt: statement.int64(at: 6))
                if let token = values.decoded(by: "call store") { tokens.append(token) }
            }
            return tokens
        }
    }
}
