import SignalProtocol
import SignalSystem

extension SignalClient {
    /// Tries to open a new connection as the same device, with backoff, until
    /// ``ConnectOptions/reconnectWindow`` passes; then either
    /// ``ClientEvent/reconnected(activeCall:endpoint:)`` or ``ClientEvent/disconnected(_:)``.
    /// Each attempt goes to the next of ``endpoints``, cycling, starting after
    /// the one whose connection was lost (that node is likely gone); the
    /// backoff counts attempts, not rounds of the list, so one endpoint is
    /// retried as before and a dead node costs one wait. The waits are timers
    /// of the client I/O loop.
    func startReconnecting(after lost: ClientError) {
        let next = (state.withLock { $0.endpointIndex } + 1) % endpoints.count
        scheduleAttempt(0, at: next, deadline: Deadline.now().adding(seconds: options.reconnectWindow), lastError: lost)
    }

    private func scheduleAttempt(_ attempt: Int, at index: Int, deadline: Deadline, lastError: ClientError) {
        let delay = min(
            Self.reconnectBackoff.delay(afterFailures: attempt, random: 0),
            max(0, deadline.seconds(since: .now())))
        let submitted = ClientIO.submit { [weak self] loop in
            loop.schedule(after: delay) { [weak self] in
                self?.reconnect(attempt: attempt, at: index, deadline: deadline, lastError: lastError)
            }
        }
        if !submitted { giveUp(lastError) }
    }

    private func reconnect(attempt: Int, at index: Int, deadline: Deadline, lastError: ClientError) {
        guard case .reconnecting = state.withLock({ $0.phase }) else { return }
        let left = deadline.seconds(since: .now())
        guard left > 0 else { return giveUp(lastError) }
        var attemptOptions = options
        attemptOptions.deviceId = deviceId
        (attemptOptions.resumeAfter, attemptOptions.resumeEpoch) = state.withLock { ($0.lastSeq, $0.epoch) }
        attemptOptions.connectTimeout = min(options.connectTimeout, left)
        ClientConnection.open(endpoints[index], credentials: credentials, options: attemptOptions) {
            [weak self] result in
            switch result {
            case .success(let connection):
                guard let self else { return connection.abort() }
                adopt(connection, at: index)
            case .failure(let error):
                guard let self else { return }
                // The server refused the credentials or the device: no node would take them.
                if !error.isWorthAnotherEndpoint || deadline.seconds(since: .now()) <= 0 { return giveUp(error) }
                scheduleAttempt(attempt + 1, at: (index + 1) % endpoints.count, deadline: deadline, lastError: error)
            }
        }
    }

    private func giveUp(_ lastError: ClientError) {
        state.withLock { state in
            guard case .reconnecting = state.phase else { return }
            state.enter(.finished)
            finishStreams(
                ClientError(
                    code: lastError.code, message: "reconnecting failed: \(lastError.message)",
                    closeCode: lastError.closeCode, httpStatus: lastError.httpStatus))
        }
    }

    /// Makes `connection`, to the endpoint at `index`, the current one, unless
    /// the client was closed meanwhile. What the server says the device
    /// missed comes first, as call events, then
    /// ``ClientEvent/reconnected(activeCall:endpoint:)``, then the connection's live events.
    private func adopt(_ connection: ClientConnection, at index: Int) {
        let adopted = state.withLock { state -> Bool in
            guard case .reconnecting = state.phase, !state.closing else { return false }
            state.enter(.connected(connection))
            // Positions of another store epoch say nothing about this one's.
            state.lastSeq =
                connection.auth.epoch == state.epoch ? max(state.lastSeq, connection.auth.seq) : connection.auth.seq
            state.epoch = connection.auth.epoch
            state.endpointIndex = index
            return true
        }
        if adopted {
            if let resume = connection.auth.resume, resume.resumed {
                for call in resume.calls { deliver(call) }
            }
            eventSink.yield(.reconnected(activeCall: connection.auth.activeCall, endpoint: endpoints[index]))
        }
        startReading(connection)
        if !adopted { connection.beginClose() }
    }
}
