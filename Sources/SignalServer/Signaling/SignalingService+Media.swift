import SignalCore
import SignalCrypto
import SignalProtocol

extension SignalingService {
    /// A token for `uid` to join the media room of call `sessionId`: only a
    /// party of the call, and only while it is `ongoing`. Read from the
    /// store, which holds an accept before anyone hears of it, so it works
    /// alike on one node and in a cluster. Completes off the caller's thread.
    func mediaToken(
        sessionId: String, uid: String, completion: @escaping @Sendable (SignalingReply) -> Void
    ) {
        guard config.media.isConfigured else {
            return completion(
                .failure(SignalError(.mediaNotConfigured, "this server has no media server (media.livekit.*)")))
        }
        let (settings, now) = (config.media, self.now)
        backend.call(sessionId: sessionId, askedBy: uid) { result in
            completion(
                result.mapError(\.signalError).flatMap { call in
                    Self.mediaToken(for: call, sessionId: sessionId, uid: uid, now: now, settings: settings)
                })
        }
    }

    private static func mediaToken(
        for call: Call?, sessionId: String, uid: String, now: Int64, settings: LiveKitSettings
    ) -> SignalingReply {
        guard let call else { return .failure(SignalError(.sessionNotFound, "no call \(sessionId)")) }
        guard call.initiator == uid || call.receiver == uid else {
            return .failure(SignalError(.notAParty, "\(uid) is not a party of call \(sessionId)"))
        }
        switch call.status {
        case .ongoing: break
        case .initiated: return .failure(SignalError(.notStarted, "call \(sessionId) still rings: accept it first"))
        default: return .failure(SignalError(.terminated, "call \(sessionId) is \(call.status.rawValue)"))
        }
        do throws(CryptoError) {
            guard
                let token = try LiveKitToken.mint(
                    sessionId: sessionId, uid: uid,
                    name: uid == call.initiator ? call.initiatorName : call.receiverName,
                    now: now, settings: settings)
            else { return .failure(SignalError(.mediaNotConfigured, "this server has no media server")) }
            return .success(.mediaToken(token))
        } catch {
            return .failure(SignalError(.internalError, "minting the media token failed: \(error.message)"))
        }
    }
}
