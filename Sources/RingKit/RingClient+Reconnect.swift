import SignalProtocol

extension RingClient {
    /// Opens new links with backoff until one logs in as the same device
    /// and resumes after the largest `seq` seen (the auth result is taken
    /// in by ``finish``, which also ends the reconnecting state). Gives up
    /// when the server refuses the credentials, or after the policy's attempts.
    func reconnectLoop() async {
        var failures = 0
        while true {
            try? await Task.sleep(nanoseconds: UInt64(policy.delay(afterFailures: failures) * 1_000_000_000))
            let resume = core.withLock { state -> (Credentials, ResumePoint)? in
                guard state.reconnect != nil, let session = state.session else { return nil }
                return (session.credentials, ResumePoint(deviceId: session.deviceId, afterSeq: session.lastSeq))
            }
            guard !Task.isCancelled, let (credentials, point) = resume else { return }
            do throws(RingError) {
                try await openLink()
                _ = try await perform(.auth(credentials, deviceId: point.deviceId, resume: point))
                return
            } catch {
                failures += 1
                if Self.refusesTheDevice(error) || policy.maxAttempts.map({ failures >= $0 }) == true {
                    return giveUp(error)
                }
                dropUnauthenticatedLink()
            }
        }
    }

    /// Whether `error` would be the same on every attempt: the server
    /// refused the credentials or the device (an error result other than
    /// unavailable or rate limited, or a close with 4001 or 4003).
    private static func refusesTheDevice(_ error: RingError) -> Bool {
        if !WebSocketCloseCode.allowsReconnect(afterClose: error.closeCode) { return true }
        guard error.isServerError else { return false }
        return error.code != SignalErrorCode.unavailable.rawValue && error.code != SignalErrorCode.rateLimited.rawValue
    }

    /// Closes a link that opened but did not log in (its auth failed or timed out).
    private func dropUnauthenticatedLink() {
        let link = core.withLock { state -> RingClientState.Link? in
            guard !state.authenticated, let link = state.link else { return nil }
            state.link = nil
            return link
        }
        link?.connection.close(code: WebSocketCloseCode.normalClosure.rawValue)
    }

    /// Stops reconnecting: waiting initiates fail with `error`, the client is disconnected.
    private func giveUp(_ error: RingError) {
        let link = core.withLock { state -> RingClientState.Link? in
            guard state.reconnect != nil else { return nil }
            state.reconnect = nil
            state.session = nil
            state.disconnectReason = RingError(
                code: error.code, message: "reconnecting failed: \(error.message)", closeCode: error.closeCode)
            state.fail(error, where: { _ in true })
            let link = state.link
            state.link = nil
            state.authenticated = false
            announce(&state)
            return link
        }
        link?.connection.close(code: WebSocketCloseCode.normalClosure.rawValue)
    }
}
