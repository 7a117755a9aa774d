import SignalCore
import SignalProtocol

extension SignalingService {
    /// Stores `registration` as the token of `uid`'s device `deviceId`
    /// (over the WebSocket or REST), moving it from any device that held it.
    /// An APNs token needs a topic, its own or the configured bundle id.
    func registerPushToken(
        _ registration: PushRegistration, uid: String, deviceId: String,
        completion: @escaping @Sendable (Result<RegisteredPushToken, SignalError>) -> Void
    ) {
        if registration.platform == .apnsVoip, registration.topic == nil, config.push.apns.bundleId == nil {
            return completion(
                .failure(
                    SignalError(
                        .validation,
                        "an apns-voip token needs a topic (the app's bundle id): the server has no push.apns.bundleId"))
            )
        }
        let token = RegisteredPushToken(uid: uid, deviceId: deviceId, registration: registration, updatedAt: now)
        backend.pushTokens.save(token, limit: config.push.maxTokensPerUser) { [pushTokens, config] result in
            if case .success(let saved) = result {
                pushTokens.saved(saved)
                for device in saved.movedFrom { Log.info("push: the token of \(device) moved to \(uid)/\(deviceId)") }
                for device in saved.evicted {
                    Log.info(
                        "push: dropped the token of \(device): \(uid) has more than \(config.push.maxTokensPerUser)")
                }
            }
            completion(result.map(\.token).mapError(\.signalError))
        }
    }

    /// Removes the token of `uid`'s device `deviceId`; whether it had one.
    func unregisterPushToken(
        uid: String, deviceId: String,
        completion: @escaping @Sendable (Result<Bool, SignalError>) -> Void
    ) {
        let device = PushDeviceKey(uid: uid, deviceId: deviceId)
        backend.pushTokens.delete(of: device) { [pushTokens] result in
            if case .success = result { pushTokens.removed(device) }
            completion(result.mapError(\.signalError))
        }
    }
}
