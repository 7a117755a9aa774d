import SignalCore
import SignalProtocol

/// Users' profiles and do-not-disturb: kept by the backend, and on one node
/// also by the service's machine, which reads them when a call is placed
/// (a cluster's transactions read them from the database).
extension SignalingService {
    /// What changing a user's record did.
    typealias UserUpdate = (before: UserRecord, after: UserRecord)

    func user(uid: String, completion: @escaping @Sendable (Result<UserRecord?, SignalError>) -> Void) {
        backend.user(uid: uid) { completion($0.mapError(\.signalError)) }
    }

    /// Applies `change` to `uid`'s record, durably, then hands the record to
    /// this node's machine, so that the next call placed reads it.
    func updateUser(
        uid: String, _ change: @escaping @Sendable (inout UserRecord) -> Void,
        completion: @escaping @Sendable (Result<UserUpdate, SignalError>) -> Void
    ) {
        backend.updateUser(uid: uid, at: now, change) { [self] result in
            if case .success(let update) = result, backend.decidesInMemory {
                core.withLock { $0.machine.remember(update.after) }
            }
            completion(result.mapError(\.signalError))
        }
    }

    /// Sets `uid`'s do-not-disturb (from a device or the REST API); an
    /// `until` that has passed is refused rather than taken as `off`.
    func setDoNotDisturb(
        _ setting: DoNotDisturb, uid: String,
        completion: @escaping @Sendable (Result<UserUpdate, SignalError>) -> Void
    ) {
        if let until = setting.until, until <= now {
            return completion(.failure(SignalError(.validation, "until must be in the future")))
        }
        updateUser(uid: uid, { $0.doNotDisturb = setting }, completion: completion)
    }
}
