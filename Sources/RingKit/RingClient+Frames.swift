import SignalProtocol

extension RingClient {
    /// What the transport of link `id` reports, in its order.
    func receive(_ event: RingTransportEvent, on id: Int) {
        switch event {
        case .text(let text): receive(text, on: id)
        case .closed(let code, let reason): linkClosed(id, code: code, reason: reason)
        }
    }

    private func receive(_ text: String, on id: Int) {
        switch ServerFrame.read(Array(text.utf8)) {
        case .brokenAnswer(let requestId, let error):
            finish(requestId, on: id, with: .failure(.protocolViolation(error.message)))
        case .skipped:
            return
        case .frame(.call(let call)):
            core.withLock { state in
                state.saw(call)
                sink.yield(.call(call))
            }
        case .frame(.signal(let signal)):
            sink.yield(.signal(signal))
        case .frame(.result(let requestId?, let outcome)):
            finish(requestId, on: id, with: outcome.mapError(RingError.init))
        case .frame(.result(nil, _)):
            // Results no request asked for (an auth timeout): the close follows.
            return
        }
    }

    /// Ends the wait of request `requestId` sent on link `id` with `outcome`,
    /// decoded for the request it answers. An auth result is taken in here,
    /// before any later frame of the link, so what a resume brings is
    /// delivered before the link's live events.
    private func finish(_ requestId: String, on id: Int, with outcome: Result<JSONValue, RingError>) {
        let resends = core.withLock { state -> [String] in
            guard let pending = state.pending[requestId], pending.link == id else { return [] }
            state.pending[requestId] = nil
            pending.timeout.cancel()
            let result = outcome.flatMap { data in
                ResultData.decoding(data, answering: pending.request.type).mapError {
                    RingError.protocolViolation($0.message)
                }
            }
            var resends: [String] = []
            switch result {
            case .success(.authenticated(let auth)):
                if case .auth(let credentials, _, _) = pending.request {
                    resends = adopt(auth, credentials: credentials, &state)
                }
            case .success(.initiated(let call, _, _)), .success(.call(let call)), .success(.activeCall(let call?)):
                state.saw(call)
            case .success, .failure:
                break
            }
            pending.continuation.resume(returning: result)
            return resends
        }
        guard !resends.isEmpty, let connection = core.withLock({ $0.link?.connection }) else { return }
        for text in resends { connection.send(text) }
    }

    /// The link is logged in as `auth` says: the session (kept by
    /// reconnects), the calls a resume brought, then the initiates that
    /// waited for a connection, as frames to send (call with the state locked).
    private func adopt(
        _ auth: Authentication, credentials: Credentials, _ state: inout RingClientState
    ) -> [String] {
        // Positions of another store epoch say nothing about this one's.
        let lastSeq =
            state.session.map { $0.epoch == auth.epoch ? max($0.lastSeq, auth.seq) : auth.seq } ?? auth.seq
        state.session = RingClientState.Session(
            credentials: credentials, uid: auth.uid, deviceId: auth.deviceId, lastSeq: lastSeq, epoch: auth.epoch)
        state.authenticated = true
        state.reconnect = nil
        if let resume = auth.resume, resume.resumed {
            for call in resume.calls {
                state.saw(call)
                sink.yield(.call(call))
            }
        }
        announce(&state)
        guard let link = state.link else { return [] }
        var resends: [String] = []
        for (id, pending) in state.pending where pending.link == nil {
            state.pending[id]?.link = link.id
            resends.append(Self.text(of: ClientFrame(id: id, request: pending.request)))
        }
        return resends
    }

    /// Link `id` is gone: its requests fail (an initiate waits for the next
    /// link when the client reconnects), and the client reconnects unless
    /// it was not logged in, reconnecting is off, or the server refused or
    /// replaced the device (4001, 4003).
    private func linkClosed(_ id: Int, code: UInt16?, reason: String) {
        core.withLock { state in
            guard let link = state.link, link.id == id else {
                if state.openingLink == id { state.openingLink = nil }
                return
            }
            state.link = nil
            state.authenticated = false
            let detail = reason.isEmpty ? "" : ": \(reason)"
            let error = RingError.closed(
                "the connection closed\(code.map { " with code \($0)" } ?? "")\(detail)", closeCode: code)
            let reconnecting =
                state.session != nil && policy.isEnabled && WebSocketCloseCode.allowsReconnect(afterClose: code)
            if reconnecting {
                for (requestId, pending) in state.pending where pending.link == id && pending.resendable {
                    state.pending[requestId]?.link = nil
                }
                state.fail(error, where: { $0.link == id })
                if state.reconnect == nil { startReconnecting(&state) }
            } else {
                state.fail(error, where: { $0.link == id || $0.link == nil })
                state.reconnect?.cancel()
                state.reconnect = nil
                state.session = nil
                state.disconnectReason = error
            }
            announce(&state)
        }
    }
}
