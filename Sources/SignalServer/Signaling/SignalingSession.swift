import SignalCore
import SignalProtocol
import SignalReactor

/// One `/v1/ws` connection: authenticates it (first frame, or a token on the
/// upgrade request), rate-limits it, and passes its requests to the
/// ``SignalingService``. Lives on its connection's loop.
final class SignalingSession: WebSocketResponder {
    /// Where the session stands.
    enum State {
        /// Waiting for the auth frame until the timer fires.
        case awaitingAuth(TimerID?)
        /// Authenticated as this device.
        case authenticated(Device)
        /// The connection is closed (or closing after a failure).
        case closed
    }

    private let loopState: SignalingLoop
    private var service: SignalingService { loopState.service }
    private let headerIdentity: (uid: String, deviceId: String?)?
    /// Whether the upgrade request said a proxy forwarded it: the shipped
    /// development auth key is refused then (``AccessKeys/refusal(of:throughProxy:)``).
    private let throughProxy: Bool
    private var socket: WebSocket?
    private(set) var address: DeviceAddress?
    private var state: State = .awaitingAuth(nil)
    private var limiter: RateLimiter
    /// What the test API holds back (a stalled network), in order; nil
    /// while frames flow.
    private var held: [Delivery]?
    private var holdTimer: TimerID?

    /// A session; `headerIdentity` when the upgrade request carried a valid token.
    init(loop: SignalingLoop, headerIdentity: (uid: String, deviceId: String?)?, throughProxy: Bool) {
        loopState = loop
        self.headerIdentity = headerIdentity
        self.throughProxy = throughProxy
        limiter = RateLimiter(rate: loop.service.config.requestsPerSecond, burst: loop.service.config.requestBurst)
    }

    func webSocketDidOpen(_ socket: WebSocket) {
        self.socket = socket
        let address = loopState.add(self)
        self.address = address
        if let identity = headerIdentity {
            authenticate(uid: identity.uid, deviceId: identity.deviceId, requestId: nil)
            return
        }
        let timer = socket.loop.schedule(after: service.config.authTimeout) { [weak self] in
            self?.refuse(
                id: nil, SignalError(.authTimeout, "no auth frame within \(self?.service.config.authTimeout ?? 0)s"))
        }
        state = .awaitingAuth(timer)
    }

    func webSocket(_ socket: WebSocket, didReceive message: WebSocketMessage) {
        let parsed: Result<ClientFrame, ClientFrame.ParseError>
        if message.kind == .text {
            parsed = Result { () throws(ClientFrame.ParseError) in try ClientFrame.parse(message.payload) }
        } else {
            parsed = .failure(
                ClientFrame.ParseError(
                    id: nil, error: SignalError(.badRequest, "frames must be text frames holding JSON")))
        }
        // Every frame of an authenticated connection counts, well-formed or not.
        if case .authenticated = state, !limiter.allow() {
            let id = (try? parsed.get())?.id
            service.metrics.rateLimited.increment()
            let retryAfter = limiter.millisecondsUntilNextToken
            return send(
                .result(
                    id: id,
                    .failure(
                        SignalError(
                            .rateLimited, "too many requests; slow down (retry in \(retryAfter) ms)",
                            retryAfterMs: retryAfter))))
        }
        let frame: ClientFrame
        switch parsed {
        case .success(let value): frame = value
        case .failure(let error): return fail(id: error.id, error.error)
        }
        switch state {
        case .closed:
            return
        case .awaitingAuth:
            guard case .auth(let credentials, let deviceId, let resume) = frame.request else {
                return refuse(id: frame.id, SignalError(.authRequired, "the first frame must be auth"))
            }
            switch verify(credentials) {
            case .success(let uid):
                authenticate(uid: uid, deviceId: deviceId, requestId: frame.id, resuming: resume)
            case .failure(let error): refuse(id: frame.id, error)
            }
        case .authenticated(let device):
            switch frame.request {
            case .auth:
                send(
                    .result(
                        id: frame.id, .failure(SignalError(.alreadyAuthenticated, "this connection is authenticated"))))
            case .getCallLogs(let filter):
                service.callLogs(filter, id: frame.id, from: device)
            case .getIceServers:
                // An HMAC per TURN entry: cheap, and no I/O, so answered here on the loop.
                send(.result(id: frame.id, service.iceServers(for: device.uid).map(\.json)))
            case .getMediaToken(let sessionId):
                let (service, id) = (service, frame.id)
                service.mediaToken(sessionId: sessionId, uid: device.uid) { service.reply(to: device, id: id, $0) }
            case .registerPushToken(let registration):
                let (service, id) = (service, frame.id)
                service.registerPushToken(registration, uid: device.uid, deviceId: device.deviceId) { result in
                    service.reply(to: device, id: id, result.map(ResultData.pushToken))
                }
            case .setDoNotDisturb(let setting):
                let (service, id) = (service, frame.id)
                service.setDoNotDisturb(setting, uid: device.uid) { result in
                    service.reply(to: device, id: id, result.map { .doNotDisturb($0.after.doNotDisturb) })
                }
            case .unregisterPushToken:
                let (service, id) = (service, frame.id)
                service.unregisterPushToken(uid: device.uid, deviceId: device.deviceId) { result in
                    service.reply(to: device, id: id, result.map(ResultData.pushTokenRemoved))
                }
            default:
                service.handle(frame.request, id: frame.id, from: device, on: loopState)
            }
        }
    }

    func webSocketDidClose(_ socket: WebSocket, code: WebSocketCloseCode) {
        if case .awaitingAuth(let timer?) = state { socket.loop.cancel(timer) }
        if let holdTimer { socket.loop.cancel(holdTimer) }
        held = nil
        if case .authenticated(let device) = state { service.disconnect(device, on: loopState) }
        state = .closed
        if let address { loopState.remove(address) }
    }

    /// Delivers something the service sent this device.
    func deliver(_ delivery: Delivery) {
        if held != nil {
            held?.append(delivery)
            return
        }
        switch delivery {
        case .frame(let bytes):
            socket?.send(WebSocketMessage(kind: .text, payload: bytes))
        case .close(let code, let reason):
            socket?.close(code: code, reason: reason)
        }
    }

    // MARK: Authentication

    private func verify(_ credentials: Credentials) -> Result<String, SignalError> {
        switch credentials {
        case .authKey(let uid, let key):
            guard Identifier.isValid(uid) else {
                return .failure(SignalError(.validation, "uid must be \(Identifier.rule)"))
            }
            guard service.keys.isAuthKey(key) else { return .failure(SignalError(.authFailed, "unknown auth key")) }
            if let refusal = service.keys.refusal(of: key, throughProxy: throughProxy) {
                return .failure(SignalError(.authFailed, refusal))
            }
            return .success(uid)
        case .token(let token):
            return service.tokens.verify(token, now: service.now)
        }
    }

    private func authenticate(uid: String, deviceId: String?, requestId: String?, resuming: ResumePoint? = nil) {
        guard let address else { return }
        if case .awaitingAuth(let timer?) = state { socket?.loop.cancel(timer) }
        let device = Device(
            uid: uid, deviceId: deviceId ?? "d-" + String(SessionID.random().prefix(16)), address: address)
        state = .authenticated(device)
        socket?.markAuthenticated()
        service.connect(device, requestId: requestId, resuming: resuming, on: loopState)
    }

    /// Answers an unauthenticated connection's failure, then closes it with 4001.
    private func refuse(id: String?, _ error: SignalError) {
        guard case .awaitingAuth(let timer) = state else { return }
        if let timer { socket?.loop.cancel(timer) }
        state = .closed
        send(.result(id: id, .failure(error)))
        socket?.close(code: .notAuthenticated, reason: error.code.rawValue)
    }

    /// Answers a bad frame: before authentication it ends the connection, after it the connection stays.
    private func fail(id: String?, _ error: SignalError) {
        if case .awaitingAuth = state {
            refuse(id: id, error)
        } else {
            send(.result(id: id, .failure(error)))
        }
    }

    private func send(_ frame: ServerFrame) {
        service.metrics.count(frame)
        deliver(.frame(frame.encoded))
    }

    // MARK: Faults (the test API)

    /// Holds back every frame and close for this device, for `milliseconds`
    /// or, with nil, until ``release()``; the WebSocket's own pings and
    /// pongs still flow. Holding again restarts the time.
    func hold(milliseconds: Int64?) {
        guard let socket else { return }
        if held == nil { held = [] }
        if let holdTimer { socket.loop.cancel(holdTimer) }
        holdTimer = milliseconds.map { ms in
            socket.loop.schedule(after: Double(ms) / 1000) { [weak self] in
                self?.holdTimer = nil
                self?.release()
            }
        }
    }

    /// Sends what was held, in order, and lets frames flow again.
    func release() {
        if let holdTimer { socket?.loop.cancel(holdTimer) }
        holdTimer = nil
        guard let frames = held else { return }
        held = nil
        for delivery in frames { deliver(delivery) }
    }

    /// Drops the connection with a TCP reset and no close frame.
    func drop() { socket?.reset() }

    /// Closes the connection for a reset of the test API: the device is
    /// gone at once, not when the peer answers the close, so no frame it
    /// sends meanwhile reaches the new server.
    func closeForReset() {
        held = nil
        if case .authenticated(let device) = state { service.disconnect(device, on: loopState) }
        if case .awaitingAuth(let timer?) = state { socket?.loop.cancel(timer) }
        state = .closed
        socket?.close(code: .testReset, reason: "the test API reset the server")
    }
}
