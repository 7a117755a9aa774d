import SignalCore
import SignalProtocol

/// Where the push tokens are stored: this node's SQLite store, or the
/// cluster's PostgreSQL (docs/CLUSTER.md, "Push"), where every change is
/// also told to every node (``ClusterBroadcast/pushTokens(of:)``) so that
/// each node's ``PushTokenRegistry`` follows it.
enum PushTokenStore: Sendable {
    case local(CallStore)
    case cluster(ClusterNode)

    /// How often a cluster save runs when another node moved the same token
    /// at the same moment (the unique index refused the second), or two
    /// users' devices swapped tokens (PostgreSQL broke the deadlock).
    static let clusterSaveAttempts = 3

    /// The SQLSTATEs of those races, after which a save runs again.
    private static let clusterSaveRaces: Set<String?> = [PostgresError.uniqueViolation, PostgresError.deadlockDetected]

    /// Stores `token` as its device's, moving it from any device that held
    /// it, and keeps the user within `limit` tokens.
    func save(
        _ token: RegisteredPushToken, limit: Int,
        completion: @escaping @Sendable (Result<PushTokenSaved, StoreError>) -> Void
    ) {
        switch self {
        case .local(let store):
            store.savePushToken(token, limit: limit, completion: completion)
        case .cluster(let node):
            node.read(
                { db throws(StoreError) in
                    try reportingPostgresErrors { () throws(PostgresError) in
                        for attempt in 1 ... Self.clusterSaveAttempts {
                            do throws(PostgresError) {
                                return try db.transaction { () throws(PostgresError) in
                                    let saved = try db.savePushToken(token, limit: limit)
                                    try Self.broadcast(Set([token.uid] + saved.movedFrom.map(\.uid)), on: db)
                                    return saved
                                }
                            } catch
                                where Self.clusterSaveRaces.contains(error.sqlState)
                                && attempt < Self.clusterSaveAttempts
                            {
                                continue
                            }
                        }
                        throw PostgresError(sqlState: nil, message: "the push token kept moving between devices")
                    }
                }, completion: completion)
        }
    }

    /// Removes the token of `device`; with `only`, only while it is that
    /// registration. Completes with whether the device had one.
    func delete(
        of device: PushDeviceKey, only token: RegisteredPushToken? = nil,
        completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void
    ) {
        switch self {
        case .local(let store):
            store.deletePushToken(of: device, only: token, completion: completion)
        case .cluster(let node):
            node.read(
                { db throws(StoreError) in
                    try reportingPostgresErrors { () throws(PostgresError) in
                        try db.transaction { () throws(PostgresError) in
                            let removed = try db.deletePushToken(of: device, only: token)
                            if removed { try Self.broadcast([device.uid], on: db) }
                            return removed
                        }
                    }
                }, completion: completion)
        }
    }

    /// Forgets the alert token of `device` while it is still `token`'s
    /// registration (APNs called it dead; the VoIP token stays). Completes
    /// with whether it did.
    func clearAlertToken(
        of device: PushDeviceKey, only token: RegisteredPushToken,
        completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void
    ) {
        switch self {
        case .local(let store):
            store.clearAlertToken(of: device, only: token, completion: completion)
        case .cluster(let node):
            node.read(
                { db throws(StoreError) in
                    try reportingPostgresErrors { () throws(PostgresError) in
                        try db.transaction { () throws(PostgresError) in
                            let cleared = try db.clearAlertToken(of: device, only: token)
                            if cleared { try Self.broadcast([device.uid], on: db) }
                            return cleared
                        }
                    }
                }, completion: completion)
        }
    }

    /// Sent in the transaction, so other nodes hear of the change once it committed.
    private static func broadcast(_ uids: Set<String>, on db: PostgresConnection) throws(PostgresError) {
        try ClusterBroadcast.send(ClusterBroadcast.pushTokens(of: uids.sorted()), on: db)
    }
}
