import SignalProtocol

extension SignalError {
    /// The answer to `uid`'s request about `sessionId`, which is not live,
    /// given what the store holds of it. In the core so that the server,
    /// answering from the store, and `ringd states` answer the same way.
    package static func notLive(_ sessionId: String, stored: Call?, askedBy uid: String) -> SignalError {
        guard let stored else { return SignalError(.sessionNotFound, "no call \(sessionId)") }
        guard stored.isParty(uid) else { return SignalError(.notAParty, "\(uid) is not a party of call \(sessionId)") }
        return SignalError(.terminated, "call \(sessionId) already ended (\(stored.status.rawValue))")
    }
}
