import SignalProtocol
import SignalReactor
import Synchronization

/// One authenticated WebSocket connection, as the rest of the library holds
/// it from any thread: every call hops to the client I/O loop, where the
/// ``ClientWebSocket`` lives, and async calls are completed from there.
final class ClientConnection: Sendable {
    let auth: Authentication
    /// Whether this connection agreed on permessage-deflate.
    let compresses: Bool
    private let webSocket: LoopBound<ClientWebSocket>
    private let events: ClientConnectionEvents

    private init(_ opened: ClientWebSocket.Opened, auth: Authentication, events: ClientConnectionEvents) {
        self.auth = auth
        compresses = opened.compresses
        webSocket = opened.webSocket
        self.events = events
    }

    /// Connects, upgrades (offering permessage-deflate when the options ask)
    /// and authenticates as the options' device; `completion` gets the
    /// connection or why there is none (an error result: the server's code).
    /// Call events that arrive before ``start(onCall:onClose:)`` wait for it.
    static func open(
        _ endpoint: ServerEndpoint, credentials: Credentials, options: ConnectOptions,
        completion: @escaping @Sendable (Result<ClientConnection, ClientError>) -> Void
    ) {
        openWebSocket(endpoint, credentials: credentials, options: options) { outcome in
            completion(
                outcome.flatMap { opened, events in
                    // A WebSocket with credentials opens only with its auth result.
                    guard let auth = opened.auth else { return .failure(.protocolViolation("no auth result")) }
                    return .success(ClientConnection(opened, auth: auth, events: events))
                })
        }
    }

    /// Resolves `endpoint` and opens a ``ClientWebSocket`` to it (without
    /// credentials, a frame connection); `completion` gets what opened and
    /// the events it reports to.
    static func openWebSocket(
        _ endpoint: ServerEndpoint, credentials: Credentials?, options: ConnectOptions,
        completion: @escaping @Sendable (Result<(ClientWebSocket.Opened, ClientConnectionEvents), ClientError>) -> Void
    ) {
        ClientIO.resolve(endpoint) { resolved in
            switch resolved {
            case .failure(let error):
                completion(.failure(error))
            case .success(let (loop, addresses)):
                let events = ClientConnectionEvents()
                _ = ClientWebSocket(
                    to: addresses, of: endpoint, credentials: credentials, options: options,
                    events: events, on: loop
                ) { opened in
                    completion(opened.map { ($0, events) })
                }
            }
        }
    }

    /// ``open(_:credentials:options:completion:)``, awaited.
    static func open(
        _ endpoint: ServerEndpoint, credentials: Credentials,
        options: ConnectOptions
    ) async throws(ClientError) -> ClientConnection {
        try await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<ClientConnection, ClientError>, Never>) in
            open(endpoint, credentials: credentials, options: options) { continuation.resume(returning: $0) }
        }.get()
    }

    /// Starts delivering: `onPush` gets every call event and signal in
    /// order, then `onClose` once when the connection is gone. Both run on the I/O loop.
    func start(onPush: @escaping @Sendable (ServerPush) -> Void, onClose: @escaping @Sendable (ClientError) -> Void) {
        events.startOnLoop(onPush: onPush, onClose: onClose)
    }

    /// Sends `request` and waits for its result (at most the request timeout).
    func request(_ request: ClientRequest) async -> Result<ResultData, ClientError> {
        let webSocket = self.webSocket, events = self.events
        return await ClientIO.perform(orElse: .failure(.closed("the connection closed"))) { loop, completion in
            guard let open = webSocket.value(on: loop) else {
                return completion(.failure(events.endError ?? .closed("the connection closed")))
            }
            open.request(request, completion: completion)
        }
    }

    /// Sends a close frame with `code` (once), starting the close handshake.
    func beginClose(code: WebSocketCloseCode = .normalClosure) { webSocket.beginClose(code: code) }

    /// Drops the connection at once, without a close handshake; what is
    /// pending fails and the close is reported.
    func abort() { webSocket.abort() }

    /// Starts the close handshake and returns once the connection is gone,
    /// dropping it when the server has not closed within `timeout` seconds.
    func close(within timeout: Double) async {
        if webSocket.close(code: .normalClosure, within: timeout) { await events.waitUntilClosed() }
    }
}

/// What a holder on another thread does to a ``ClientWebSocket``: each hops to the I/O loop.
extension LoopBound<ClientWebSocket> {
    /// Sends a close frame with `code` (once), starting the close handshake.
    func beginClose(code: WebSocketCloseCode) {
        ClientIO.submit { loop in self.value(on: loop)?.beginClose(code: code) }
    }

    /// Drops the connection at once, without a close handshake.
    func abort() {
        ClientIO.submit { loop in self.value(on: loop)?.abort() }
    }

    /// Starts the close handshake with `code`, dropping the connection when
    /// the server has not closed within `timeout` seconds; false when the
    /// I/O loop is not running (then there is no connection either).
    func close(code: WebSocketCloseCode, within timeout: Double) -> Bool {
        ClientIO.submit { loop in
            self.value(on: loop)?.beginClose(code: code)
            loop.schedule(after: timeout) { self.value(on: loop)?.abort() }
        }
    }
}

/// A frame the server sent unasked.
enum ServerPush: Sendable {
    case call(Call)
    case signal(PeerSignal)
    /// A text message of a frame connection (``FrameConnection``), unparsed.
    case frame(String)
}

/// What a connection tells whoever holds it, in order, from the I/O loop:
/// call events and signals, then its end. Buffered until ``start(onPush:onClose:)``,
/// which also runs on the loop, so nothing overtakes what was buffered.
final class ClientConnectionEvents: Sendable {
    private struct State {
        var onPush: (@Sendable (ServerPush) -> Void)?
        var onClose: (@Sendable (ClientError) -> Void)?
        var buffered: [ServerPush] = []
        /// Why the connection ended, and what requests fail with since.
        var end: (error: ClientError, requestsFail: ClientError)?
        var reported = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// What a request made after the end fails with; nil while open.
    var endError: ClientError? { state.withLock { $0.end?.requestsFail } }

    /// ``start(onPush:onClose:)`` on the I/O loop, from any thread.
    func startOnLoop(
        onPush: @escaping @Sendable (ServerPush) -> Void, onClose: @escaping @Sendable (ClientError) -> Void
    ) {
        ClientIO.submit { _ in self.start(onPush: onPush, onClose: onClose) }
    }

    /// Sets the handlers and hands them what was buffered (on the loop).
    func start(onPush: @escaping @Sendable (ServerPush) -> Void, onClose: @escaping @Sendable (ClientError) -> Void) {
        let (buffered, end) = state.withLock { state in
            state.onPush = onPush
            state.onClose = onClose
            defer { state.buffered = [] }
            return (state.buffered, state.end)
        }
        for push in buffered { onPush(push) }
        if let end { report(end.error) }
    }

    /// A call event or signal (on the loop): delivered, or buffered until ``start(onPush:onClose:)``.
    func pushed(_ push: ServerPush) {
        let handler = state.withLock { state -> (@Sendable (ServerPush) -> Void)? in
            if state.onPush == nil { state.buffered.append(push) }
            return state.onPush
        }
        handler?(push)
    }

    /// On the loop: the connection ended with `error`; requests from now on fail with `requestsFail`.
    func closed(_ error: ClientError, requestsFail: ClientError) {
        let started = state.withLock { state -> Bool in
            state.end = (error, requestsFail)
            return state.onClose != nil
        }
        if started { report(error) }
    }

    private func report(_ error: ClientError) {
        let (handler, waiters) = state.withLock { state in
            guard !state.reported else {
                return (nil as (@Sendable (ClientError) -> Void)?, [CheckedContinuation<Void, Never>]())
            }
            state.reported = true
            defer { state.waiters = [] }
            return (state.onClose, state.waiters)
        }
        handler?(error)
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the end was reported (after `onClose` ran).
    func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reported = state.withLock { state in
                if !state.reported { state.waiters.append(continuation) }
                return state.reported
            }
            if reported { continuation.resume() }
        }
    }
}
