import SignalCore
import SignalProtocol

/// Push tokens, one per device (`push_tokens`). They are not links
/// of the change chain: a token is not a call change.
extension CallStore {
    /// Stores `token` as its device's, moving it from any device that held
    /// it, and keeps the user within `limit` tokens.
    func savePushToken(
        _ token: RegisteredPushToken, limit: Int,
        completion: @escaping @Sendable (Result<PushTokenSaved, StoreError>) -> Void
    ) {
        submit(writes: true, completion: completion) { connection throws(StoreError) in
            try connection.save(token, limit: limit)
        }
    }

    /// Removes the token of `device`; with `only`, only while it is that
    /// registration. Completes with whether the device had one.
    func deletePushToken(
        of device: PushDeviceKey, only token: RegisteredPushToken? = nil,
        completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void
    ) {
        submit(writes: true, completion: completion) { connection throws(StoreError) in
            try connection.deletePushToken(of: device, only: token)
        }
    }

    /// Forgets the alert token of `device` while it is still `token`'s
    /// registration. Completes with whether it did.
    func clearAlertToken(
        of device: PushDeviceKey, only token: RegisteredPushToken,
        completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void
    ) {
        submit(writes: true, completion: completion) { connection throws(StoreError) in
            try connection.clearAlertToken(of: device, only: token)
        }
    }

    /// Every stored token. Blocks until read (for start-up).
    func loadPushTokens() throws(StoreError) -> [RegisteredPushToken] {
        try wait(writes: false) { connection throws(StoreError) in try connection.pushTokens() }
    }
}
