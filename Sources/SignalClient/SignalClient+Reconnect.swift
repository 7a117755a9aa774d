import SignalSystem

extension SignalClient {
    /// Tries to open a new connection as the same device, with backoff, until
    /// ``ConnectOptions/reconnectWindow`` passes; then either
    /// ``ClientEvent/reconnected(activeCall:)`` or ``ClientEvent/disconnected(_:)``.
    /// The waits are timers of the client I/O loop.
    func startReconnecting(after lost: ClientError) {
        scheduleAttempt(0, deadline: Deadline.now().adding(seconds: options.reconnectWindow), lastError: lost)
    }

    private func scheduleAttempt(_ attempt: Int, deadline: Deadline, lastError: ClientError) {
        let delay = min(Self.reconnectBackoff[min(attempt, Self.reconnectBackoff.count - 1)],
                        max(0, deadline.seconds(since: .now())))
        let submitted = ClientIO.submit { [weak self] loop in
            loop.schedule(after: delay) { [weak self] in
                self?.reconnect(attempt: attempt, deadline: deadline, lastError: lastError)
            }
        }
        if !submitted { giveUp(lastError) }
    }

    private func reconnect(attempt: Int, deadline: Deadline, lastError: ClientError) {
        guard case .reconnecting = state.withLock({ $0.phase }) else { return }
        let left = deadline.seconds(since: .now())
        guard left > 0 else { return giveUp(lastError) }
        var attemptOptions = options
        attemptOptions.deviceId = deviceId
        attemptOptions.resumeAfter = state.withLock { $0.lastSeq }
        attemptOptions.connectTimeout = min(options.connectTimeout, left)
        ClientConnection.open(endpoint, credentials: credentials, options: attemptOptions) { [weak self] result in
            switch result {
            case .success(let connection):
                guard let self else { return connection.abort() }
                adopt(connection)
            case .failure(let error):
                guard let self else { return }
                // The server refused the credentials or the device: trying again cannot help.
                if error.code.serverCode != nil || deadline.seconds(since: .now()) <= 0 { return giveUp(error) }
                scheduleAttempt(attempt + 1, deadline: deadline, lastError: error)
            }
        }
    }

    private func giveUp(_ lastError: ClientError) {
        state.withLock { state in
            guard case .reconnecting = state.phase else { return }
            state.phase = .finished
            finishStreams(ClientError(code: lastError.code, message: "reconnecting failed: \(lastError.message)",
                                      closeCode: lastError.closeCode, httpStatus: lastError.httpStatus))
        }
    }

    /// Makes `connection` the current one, unless the client was closed
    /// meanwhile. What the server says the device missed comes first, as
    /// call events, then ``ClientEvent/reconnected(activeCall:)``, then the
    /// connection's live events.
    private func adopt(_ connection: ClientConnection) {
        let adopted = state.withLock { state -> Bool in
            guard case .reconnecting = state.phase, !state.closing else { return false }
            state.phase = .connected(connection)
            state.lastSeq = max(state.lastSeq, connection.auth.seq)
            return true
        }
        if adopted {
            if let resume = connection.auth.resume, resume.resumed {
                for call in resume.calls { deliver(call) }
            }
            eventSink.yield(.reconnected(activeCall: connection.auth.activeCall))
        }
        startReading(connection)
        if !adopted { connection.beginClose() }
    }
}
