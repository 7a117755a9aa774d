import SignalProtocol

/// Users' profiles and do-not-disturb, on either backend.
extension CallBackend {
    /// `uid`'s stored record; nil when nothing is set.
    func user(uid: String, completion: @escaping @Sendable (Result<UserRecord?, StoreError>) -> Void) {
        switch self {
        case .embedded(let store): store.user(uid: uid, completion: completion)
        case .cluster(let node):
            node.read(key: uid, { db throws(StoreError) in try db.user(uid: uid) }, completion: completion)
        }
    }

    /// Applies `change` to `uid`'s record durably: in the SQLite writer's
    /// transaction, or in a PostgreSQL transaction holding the user's lock.
    /// Completes with the record before and after.
    func updateUser(
        uid: String, at now: Int64, _ change: @escaping @Sendable (inout UserRecord) -> Void,
        completion: @escaping @Sendable (Result<(before: UserRecord, after: UserRecord), StoreError>) -> Void
    ) {
        switch self {
        case .embedded(let store): store.updateUser(uid: uid, at: now, change, completion: completion)
        case .cluster(let node):
            node.read(
                key: uid, { db throws(StoreError) in try db.updateUser(uid: uid, at: now, change) },
                completion: completion)
        }
    }
}
