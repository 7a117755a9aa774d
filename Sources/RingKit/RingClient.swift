import SignalProtocol
import Synchronization

/// A ringd client for apps: one device of one user, async/await, in
/// CometChat's vocabulary (``login(uid:authKey:deviceId:)``,
/// ``initiateCall(to:type:metadata:clientCallId:)``, ``acceptCall(_:)``…).
///
/// Requests go over a ``RingTransport`` (URLSessionWebSocketTask on Apple
/// platforms, SignalClient's reactor on Linux); everything above the
/// frames is here, the same for each. After login a lost connection is
/// reopened with backoff (``ReconnectPolicy``), the device logs in again and
/// resumes after the last change it saw (`auth.resume.afterSeq`): what it
/// missed arrives on ``events`` before `.connection(.connected(loggedIn: true))`.
/// An initiate whose connection was lost before its result is sent again
/// with the same `clientCallId`, so the server answers with the call it placed.
public final class RingClient: Sendable {
    /// The WebSocket URL (`ws://host:8787/v1/ws`; a URL without a path gets `/v1/ws`).
    public let url: String
    /// Seconds a request may wait for its result.
    public let requestTimeout: Double
    let transport: any RingTransport
    let policy: ReconnectPolicy
    let core = Mutex(RingClientState())
    let sink: AsyncStream<RingEvent>.Continuation

    /// Call events, signals and connection changes, in order, for the
    /// client's whole life (one consumer; buffered until read).
    public let events: AsyncStream<RingEvent>

    public init(
        url: String, transport: RingTransportFactory = .default, reconnect: ReconnectPolicy = .default,
        requestTimeout: Double = 10
    ) {
        self.url = Self.webSocketURL(url)
        self.transport = transport.transport
        policy = reconnect
        self.requestTimeout = requestTimeout
        (events, sink) = AsyncStream.makeStream(of: RingEvent.self, bufferingPolicy: .unbounded)
    }

    deinit {
        let link = core.withLock { state in
            state.reconnect?.cancel()
            state.fail(.closed("the client was released"), where: { _ in true })
            return state.link
        }
        link?.connection.close(code: WebSocketCloseCode.normalClosure.rawValue)
        sink.finish()
    }

    /// The logged-in uid (from the auth result, so also for tokens).
    public var uid: String? { core.withLock { $0.session?.uid } }
    /// The device id, as given at login or as the server assigned it;
    /// reconnects log in as this same device.
    public var deviceId: String? { core.withLock { $0.session?.deviceId } }
    public var state: RingConnectionState { core.withLock { $0.connectionState } }
    /// Why the client last ended up disconnected by itself: the server
    /// refused or replaced the device (close 4001/4003), or reconnecting gave up.
    public var disconnectReason: RingError? { core.withLock { $0.disconnectReason } }

    /// Opens the WebSocket (``login(uid:authKey:deviceId:)`` does it when
    /// needed); returns at once when it is open or reconnecting.
    public func connect() async throws(RingError) {
        let opening = core.withLock { state -> Task<Result<Void, RingError>, Never>? in
            if state.link != nil || state.reconnect != nil { return nil }
            if let opening = state.opening { return opening.task }
            state.openings += 1
            let number = state.openings
            let opening = Task { () -> Result<Void, RingError> in
                let result: Result<Void, RingError>
                do throws(RingError) {
                    try await self.openLink()
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                self.core.withLock { state in
                    // Unless disconnect() dropped this open and a new one started.
                    if state.opening?.number == number { state.opening = nil }
                    self.announce(&state)
                }
                return result
            }
            state.opening = (number, opening)
            state.disconnectReason = nil
            announce(&state)
            return opening
        }
        try await opening?.value.get()
    }

    /// Logs in with a uid and a development auth key (`auth.authKeys`).
    public func login(uid: String, authKey: String, deviceId: String? = nil) async throws(RingError) {
        try await login(.authKey(uid: uid, key: authKey), deviceId: deviceId)
    }

    /// Logs in with a token your backend minted (`POST /v1/tokens`).
    public func login(token: String, deviceId: String? = nil) async throws(RingError) {
        try await login(.token(token), deviceId: deviceId)
    }

    private func login(_ credentials: Credentials, deviceId: String?) async throws(RingError) {
        try await connect()
        _ = try await perform(.auth(credentials, deviceId: deviceId))
    }

    /// Closes the connection (1000) and stops reconnecting; pending requests
    /// fail with `CLIENT_CLOSED`. ``connect()`` and a login may follow.
    public func disconnect() async {
        let link = core.withLock { state -> RingClientState.Link? in
            state.reconnect?.cancel()
            state.reconnect = nil
            state.openingLink = nil
            state.opening = nil
            state.session = nil
            state.authenticated = false
            state.disconnectReason = nil
            state.fail(.closed("disconnected by the client"), where: { _ in true })
            let link = state.link
            state.link = nil
            announce(&state)
            return link
        }
        link?.connection.close(code: WebSocketCloseCode.normalClosure.rawValue)
    }

    /// Opens a transport connection and makes it the current link, unless
    /// it closed as it opened or the client disconnected meanwhile.
    func openLink() async throws(RingError) {
        let id = core.withLock { state in
            state.nextLink += 1
            state.openingLink = state.nextLink
            return state.nextLink
        }
        let connection = try await transport.open(url: url) { [weak self] event in self?.receive(event, on: id) }
        let installed = core.withLock { state -> Bool in
            guard state.openingLink == id else { return false }
            state.openingLink = nil
            state.link = RingClientState.Link(id: id, connection: connection)
            state.authenticated = false
            announce(&state)
            return true
        }
        if !installed {
            connection.close(code: WebSocketCloseCode.normalClosure.rawValue)
            throw .closed("the connection closed as it opened")
        }
    }

    /// Sends `request` and waits for its result's data. Before the login
    /// of a reconnect completes, only `auth` goes out: other requests fail,
    /// except an initiate, which waits for the new connection.
    func perform(_ request: ClientRequest) async throws(RingError) -> ResultData {
        let isAuth = request.type == .auth
        let resendable = request.type == .initiateCall
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<ResultData, RingError>, Never>) in
            let outgoing = core.withLock { state -> (any RingTransportConnection, String)? in
                let link = state.reconnect == nil || isAuth ? state.link : nil
                guard link != nil || (resendable && state.reconnect != nil) else {
                    let why =
                        state.reconnect != nil
                        ? "the connection was lost; reconnecting"
                        : state.disconnectReason.map { "not connected (\($0.message))" } ?? "not connected"
                    continuation.resume(returning: .failure(.closed(why)))
                    return nil
                }
                state.nextRequest += 1
                let id = String(state.nextRequest)
                let timeout = Task { [weak self, requestTimeout] in
                    try? await Task.sleep(nanoseconds: UInt64(requestTimeout * 1_000_000_000))
                    if !Task.isCancelled { self?.timedOut(id, request.type) }
                }
                state.pending[id] = RingClientState.Pending(
                    request: request, link: link?.id, resendable: resendable, continuation: continuation,
                    timeout: timeout)
                return link.map { ($0.connection, Self.text(of: ClientFrame(id: id, request: request))) }
            }
            if let (connection, text) = outgoing { connection.send(text) }
        }
        return try result.get()
    }

    private func timedOut(_ id: String, _ type: RequestType) {
        core.withLock { state in
            guard let pending = state.pending.removeValue(forKey: id) else { return }
            pending.continuation.resume(
                returning: .failure(
                    RingError(
                        code: RingError.Code.timeout,
                        message: "no result for \(type.rawValue) within \(requestTimeout)s")))
        }
    }

    /// Announces the connection state if it changed (call with the state locked).
    func announce(_ state: inout RingClientState) {
        let current = state.connectionState
        guard current != state.announced else { return }
        state.announced = current
        sink.yield(.connection(current))
    }

    static func text(of frame: ClientFrame) -> String {
        String(decoding: frame.encoded, as: UTF8.self)
    }

    /// `url` as a WebSocket URL: `http(s)://` becomes `ws(s)://`, and a URL
    /// without a path gets ringd's `/v1/ws`.
    static func webSocketURL(_ url: String) -> String {
        var url = url
        for (from, to) in [("http://", "ws://"), ("https://", "wss://")] where url.lowercased().hasPrefix(from) {
            url = to + url.dropFirst(from.count)
        }
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        return url[schemeEnd.upperBound...].contains("/") ? url : url + "/v1/ws"
    }
}
