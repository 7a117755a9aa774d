import SignalSystem

extension SignalClient {
    /// Tries to open a new connection as the same device, with backoff, until
    /// ``ConnectOptions/reconnectWindow`` passes; then either
    /// ``ClientEvent/reconnected(activeCall:)`` or ``ClientEvent/disconnected(_:)``.
    func reconnect(after lost: ClientError) async {
        let deadline = Deadline.now().adding(seconds: options.reconnectWindow)
        var lastError = lost
        var attempt = 0
        while deadline.seconds(since: .now()) > 0 {
            let delay = Self.reconnectBackoff[min(attempt, Self.reconnectBackoff.count - 1)]
            attempt += 1
            try? await Task.sleep(for: .seconds(min(delay, max(0, deadline.seconds(since: .now())))))
            let left = deadline.seconds(since: .now())
            guard !Task.isCancelled else { return }
            guard left > 0 else { break }
            let endpoint = self.endpoint, credentials = self.credentials
            var attempt = options
            attempt.deviceId = deviceId
            attempt.connectTimeout = min(options.connectTimeout, left)
            do {
                let opened = try await runBlocking { [attempt] () throws(ClientError) -> OpenedConnection in
                    try ConnectionOpener.open(endpoint, credentials: credentials, options: attempt)
                }
                adopt(opened)
                return
            } catch {
                lastError = error
                // The server refused the credentials or the device: trying again cannot help.
                if error.code.serverCode != nil { break }
            }
        }
        state.withLock { state in
            guard case .reconnecting = state.phase else { return }
            state.phase = .finished
            finishStreams(ClientError(code: lastError.code, message: "reconnecting failed: \(lastError.message)",
                                      closeCode: lastError.closeCode, httpStatus: lastError.httpStatus))
        }
    }

    /// Makes `opened` the current connection, unless the client was closed meanwhile.
    private func adopt(_ opened: OpenedConnection) {
        let connection = ClientConnection(opened, options: options)
        let adopted = state.withLock { state -> Bool in
            guard case .reconnecting = state.phase, !state.closing else { return false }
            state.phase = .connected(connection)
            eventSink.yield(.reconnected(activeCall: opened.auth.activeCall))
            return true
        }
        startReading(connection, opened.receiver)
        if !adopted { connection.beginClose() }
    }
}
