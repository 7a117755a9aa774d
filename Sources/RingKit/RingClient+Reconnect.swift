import SignalProtocol

extension RingClient {
    /// Starts reconnecting (call with the state locked): new links with
    /// backoff until one logs in as the same device and resumes after the
    /// largest `seq` seen. The loop holds the client only during an attempt,
    /// so a client released while reconnecting goes (its deinit cancels the loop).
    func startReconnecting(_ state: inout RingClientState) {
        state.reconnect = Task { [weak self] in
            var failures = 0
            while let delay = self?.policy.delay(afterFailures: failures) {
                try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
                guard !Task.isCancelled, let self, await self.reconnectAttempt(failures: &failures) else { return }
            }
        }
    }

    /// One attempt; whether to go on. Success ends the reconnecting state in
    /// `finish` (which takes the auth result in); a refusal by the server,
    /// or the policy's last attempt failing, gives up.
    private func reconnectAttempt(failures: inout Int) async -> Bool {
        let resume = core.withLock { state -> (Credentials, ResumePoint)? in
            guard state.reconnect != nil, let session = state.session else { return nil }
            return (
                session.credentials,
                ResumePoint(deviceId: session.deviceId, afterSeq: session.lastSeq, epoch: session.epoch)
            )
        }
        guard let (credentials, point) = resume else { return false }
        do throws(RingError) {
            try await openLink()
            _ = try await perform(.auth(credentials, deviceId: point.deviceId, resume: point))
            return false
        } catch {
            failures += 1
            if Self.refusesTheDevice(error) || policy.maxAttempts.map({ failures >= $0 }) == true {
                giveUp(error)
                return false
            }
            dropUnauthenticatedLink()
            return true
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
