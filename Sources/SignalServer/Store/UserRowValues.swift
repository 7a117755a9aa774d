import SignalProtocol

/// A `users` row's values as either store reads them, so that SQLite and
/// PostgreSQL decode a ``UserRecord`` and refuse a value this build does
/// not know with the same words.
struct UserRowValues {
    var uid: String
    var name: String?
    var avatarUrl: String?
    var metadata: String?
    var doNotDisturbMode: String?
    var doNotDisturbUntil: Int64?
    var updatedAt: Int64

    /// The columns both stores select, in this order.
    static let columns = "uid, name, avatar_url, metadata, dnd_mode, dnd_until, updated_at"

    /// The values of `record` as the columns store them.
    init(_ record: UserRecord) {
        uid = record.uid
        name = record.profile?.name
        avatarUrl = record.profile?.avatarUrl
        metadata = record.profile?.metadata?.serialized
        doNotDisturbMode = record.doNotDisturb.mode.rawValue
        doNotDisturbUntil = record.doNotDisturb.until
        updatedAt = record.updatedAt
    }

    init(
        uid: String, name: String?, avatarUrl: String?, metadata: String?, doNotDisturbMode: String?,
        doNotDisturbUntil: Int64?, updatedAt: Int64
    ) {
        self.uid = uid
        self.name = name
        self.avatarUrl = avatarUrl
        self.metadata = metadata
        self.doNotDisturbMode = doNotDisturbMode
        self.doNotDisturbUntil = doNotDisturbUntil
        self.updatedAt = updatedAt
    }

    func decoded() throws(StoreError) -> UserRecord {
        guard let mode = DoNotDisturbMode(rawValue: doNotDisturbMode ?? "off") else {
            throw StoreError(.corruptRow, "user \(uid) has do-not-disturb mode '\(doNotDisturbMode ?? "")'")
        }
        var profile: UserProfile?
        if let name {
            var parsed: JSONValue?
            if let metadata {
                do throws(JSONParseError) {
                    parsed = try JSONValue.parse(metadata)
                } catch {
                    throw StoreError(.corruptRow, "user \(uid) has unreadable metadata: \(error)")
                }
            }
            // Stored as validated; a row written by hand is taken as it is.
            profile = try? UserProfile(name: name, avatarUrl: avatarUrl, metadata: parsed)
        }
        return UserRecord(
            uid: uid, profile: profile, doNotDisturb: DoNotDisturb(mode: mode, until: doNotDisturbUntil),
            updatedAt: updatedAt)
    }
}
