import SignalProtocol

/// Users' profiles and do-not-disturb (`users`).
extension CallStore {
    func user(uid: String, completion: @escaping @Sendable (Result<UserRecord?, StoreError>) -> Void) {
        submit(writes: false, completion: completion) { connection throws(StoreError) in try connection.user(uid: uid) }
    }

    /// Applies `change` to `uid`'s record in the writer's transaction.
    func updateUser(
        uid: String, at now: Int64, _ change: @escaping @Sendable (inout UserRecord) -> Void,
        completion: @escaping @Sendable (Result<(before: UserRecord, after: UserRecord), StoreError>) -> Void
    ) {
        submit(writes: true, completion: completion) { connection throws(StoreError) in
            try connection.updateUser(uid: uid, at: now, change)
        }
    }
}
