import SignalProtocol
import SignalSystem
import Synchronization

/// One connected, authenticated device of one user.
///
/// Requests are `async` and fail with ``ClientError``: the server's code, or a
/// `CLIENT_…` code. Call events and connection changes arrive on ``events``;
/// the same call events in CometChat's vocabulary on ``notifications``.
/// Closing with ``close()`` (or losing the connection for good) ends both streams.
public final class SignalClient: Sendable {
    /// How long ``close()`` waits for the server's close frame and TCP close.
    static let closeTimeout = 3.0
    /// The waits between reconnect attempts: 0.1 s, 0.25 s, 0.625 s, then
    /// 1 s, without jitter (the reconnect window is short, 10 s by default).
    static let reconnectBackoff = ReconnectPolicy(initialDelay: 0.1, multiplier: 2.5, maxDelay: 1, jitter: 0)
    /// How many undelivered notifications ``notifications`` keeps (the newest).
    public static let notificationBufferSize = 256

    /// The authenticated uid (from the auth result, so also for token credentials).
    public let uid: String
    /// The device id, as given in ``ConnectOptions/deviceId`` or as the server assigned it;
    /// reconnects authenticate as this same device.
    public let deviceId: String
    /// The user's live call when the client connected (`activeCall` of the auth result).
    public let initialActiveCall: Call?
    /// Call events and connection changes, in order. Single consumer; finishes
    /// after ``ClientEvent/disconnected(_:)``. Buffers without bound until read.
    public let events: AsyncStream<ClientEvent>
    /// Every call event that has a CometChat listener, as ``CallNotification``
    /// (the same events as ``events``, mapped with ``CallNotification/init(call:uid:deviceId:)``).
    /// Single consumer; finishes with ``events``. Keeps only the newest
    /// ``notificationBufferSize`` undelivered notifications, so a client that
    /// never reads it holds bounded memory.
    public let notifications: AsyncStream<CallNotification>

    /// Whether the current connection agreed on permessage-deflate
    /// (``ConnectOptions/compression`` asked, and the server has it on);
    /// false while reconnecting.
    public var usesCompression: Bool {
        state.withLock { state in
            if case .connected(let connection) = state.phase { return connection.compresses }
            return false
        }
    }

    /// The endpoints the client connects to, in order (never empty; one
    /// when connected with a single endpoint).
    public let endpoints: [ServerEndpoint]
    let credentials: Credentials
    let options: ConnectOptions
    let eventSink: AsyncStream<ClientEvent>.Continuation
    let notificationSink: AsyncStream<CallNotification>.Continuation
    let state: Mutex<ClientState>

    /// Where the client's connection stands.
    enum Phase {
        /// Connected and authenticated.
        case connected(ClientConnection)
        /// The connection was lost; attempts to open a new one run on the I/O loop.
        case reconnecting
        /// Closed for good; ``ClientEvent/disconnected(_:)`` was sent.
        case finished
    }

    /// The client's mutable state, behind ``state``.
    struct ClientState {
        /// The connection's phase.
        var phase: Phase
        /// Whether ``close()`` was called.
        var closing = false
        /// The largest sequence position seen (``Call/seq``): a reconnect
        /// asks the server for what changed after it.
        var lastSeq: Int64
        /// The store epoch ``lastSeq`` is of (``Authentication/epoch``),
        /// which a reconnect names with it.
        var epoch: String?
        /// Where the latest connection went, in ``endpoints``.
        var endpointIndex: Int
        /// Requests waiting for the next connection (``connection(after:)``).
        var connectionWaiters: [CheckedContinuation<ClientConnection?, Never>] = []

        /// Moves to `next`; a new connection, or the end, wakes whoever waits for one.
        mutating func enter(_ next: Phase) {
            phase = next
            let connection: ClientConnection?
            switch next {
            case .connected(let current): connection = current
            case .finished: connection = nil
            case .reconnecting: return
            }
            for waiter in connectionWaiters { waiter.resume(returning: connection) }
            connectionWaiters = []
        }
    }

    /// Connects to `endpoint`, upgrades to a WebSocket and authenticates with
    /// `credentials`. An error result throws the server's code (e.g.
    /// `ERR_AUTH_FAILED`); see ``ClientErrorCode`` for the client's own.
    public static func connect(
        to endpoint: ServerEndpoint, credentials: Credentials,
        options: ConnectOptions = ConnectOptions()
    ) async throws(ClientError) -> SignalClient {
        try await connect(to: [endpoint], credentials: credentials, options: options)
    }

    /// Connects to the first of `endpoints` (nodes of one cluster) that
    /// takes the device, in the order given: shuffle or rotate the list to
    /// spread clients over the nodes. A failed connect, TLS handshake or
    /// upgrade, a timeout, or the server's `ERR_UNAVAILABLE` (shutting down)
    /// moves on to the next; any other refusal (e.g. `ERR_AUTH_FAILED`) would
    /// be the same on every node and is thrown at once. Each endpoint gets the whole
    /// ``ConnectOptions/connectTimeout`` and ``ConnectOptions/requestTimeout``.
    /// When every endpoint failed, throws the last one's code with a message
    /// naming each endpoint and why (one endpoint: its error as it is); no
    /// endpoint at all throws ``ClientErrorCode/badURL``. Reconnects go on
    /// through the list, starting after the endpoint whose connection was lost.
    public static func connect(
        to endpoints: [ServerEndpoint], credentials: Credentials,
        options: ConnectOptions = ConnectOptions()
    ) async throws(ClientError) -> SignalClient {
        var failures: [(endpoint: ServerEndpoint, error: ClientError)] = []
        for (index, endpoint) in endpoints.enumerated() {
            do throws(ClientError) {
                let connection = try await ClientConnection.open(endpoint, credentials: credentials, options: options)
                let client = SignalClient(
                    endpoints: endpoints, index: index, credentials: credentials,
                    options: options, connection: connection)
                client.startReading(connection)
                return client
            } catch  where error.isWorthAnotherEndpoint {
                failures.append((endpoint, error))
            }
        }
        throw ClientError(everyEndpointFailed: failures)
    }

    private init(
        endpoints: [ServerEndpoint], index: Int, credentials: Credentials, options: ConnectOptions,
        connection: ClientConnection
    ) {
        self.endpoints = endpoints
        self.credentials = credentials
        self.options = options
        uid = connection.auth.uid
        deviceId = connection.auth.deviceId
        initialActiveCall = connection.auth.activeCall
        (events, eventSink) = AsyncStream.makeStream(of: ClientEvent.self, bufferingPolicy: .unbounded)
        (notifications, notificationSink) = AsyncStream.makeStream(
            of: CallNotification.self, bufferingPolicy: .bufferingNewest(Self.notificationBufferSize))
        state = Mutex(
            ClientState(
                phase: .connected(connection), lastSeq: connection.auth.seq, epoch: connection.auth.epoch,
                endpointIndex: index))
    }

    deinit {
        state.withLock { state in
            switch state.phase {
            case .connected(let connection): connection.abort()
            case .reconnecting: break
            case .finished: return
            }
            state.enter(.finished)
            finishStreams(.closed("the client was released"))
        }
    }

    /// Closes the connection: sends a close frame with 1000, waits (at most
    /// ``closeTimeout`` seconds) for the server's close, then the events end
    /// with ``ClientEvent/disconnected(_:)``. Stops reconnecting when it is under way.
    public func close() async {
        let connection = state.withLock { state -> ClientConnection? in
            state.closing = true
            switch state.phase {
            case .connected(let connection):
                return connection
            case .reconnecting:
                state.enter(.finished)
                finishStreams(.closed("closed by the client while reconnecting"))
                return nil
            case .finished:
                return nil
            }
        }
        await connection?.close(within: Self.closeTimeout)
    }

    /// Sends `request` on the current connection and returns its result's data.
    func perform(_ request: ClientRequest) async throws(ClientError) -> ResultData {
        try await perform(request, on: try currentConnection().get())
    }

    /// The connection to send on now, or why there is none.
    private func currentConnection() -> Result<ClientConnection, ClientError> {
        state.withLock { state in
            switch state.phase {
            case .connected where state.closing: return .failure(.closed("the client is closing"))
            case .connected(let connection): return .success(connection)
            case .reconnecting: return .failure(.closed("the connection was lost; reconnecting"))
            case .finished: return .failure(.closed("the client is disconnected"))
            }
        }
    }

    /// How many times ``performAcrossReconnects(_:)`` sends one request at
    /// most: a server that closes the connection at every try is not tried forever.
    static let sendsAcrossReconnects = 4

    /// Sends `request`, and with ``ConnectOptions/reconnect`` sends it again
    /// on the next connection whenever the one it went on was lost before
    /// its result came (waiting while the client reconnects, also when it
    /// was reconnecting at the start). Only for requests the server answers
    /// once however often they come: `initiateCall` with a `clientCallId`.
    func performAcrossReconnects(_ request: ClientRequest) async throws(ClientError) -> ResultData {
        var connection: ClientConnection
        switch currentConnection() {
        case .success(let current):
            connection = current
        case .failure(let error):
            guard options.reconnect, let next = await self.connection(after: nil) else { throw error }
            connection = next
        }
        for _ in 1 ..< Self.sendsAcrossReconnects {
            do throws(ClientError) {
                return try await perform(request, on: connection)
            } catch  where error.code == .closed && options.reconnect {
                guard let next = await self.connection(after: connection) else { throw error }
                connection = next
            }
        }
        return try await perform(request, on: connection)
    }

    /// The current connection once it is not `lost` (waiting while the
    /// client reconnects); nil once the client is closing or finished.
    private func connection(after lost: ClientConnection?) async -> ClientConnection? {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                switch state.phase {
                case .connected where state.closing, .finished: continuation.resume(returning: nil)
                case .connected(let current) where current !== lost: continuation.resume(returning: current)
                case .connected, .reconnecting: state.connectionWaiters.append(continuation)
                }
            }
        }
    }

    /// Sends `request` on `connection` and returns its result's data.
    private func perform(
        _ request: ClientRequest, on connection: ClientConnection
    ) async throws(ClientError)
        -> ResultData
    {
        let data = try await connection.request(request).get()
        switch data {
        case .initiated(let call, _, _), .call(let call), .activeCall(let call?): saw(call)
        case .authenticated, .activeCall(nil), .callLogs, .pushToken, .pushTokenRemoved, .signalled, .iceServers,
            .mediaToken, .doNotDisturb:
            break
        }
        return data
    }

    /// Notes that this device has heard of `call` as it is at its `seq`.
    func saw(_ call: Call) {
        state.withLock { $0.lastSeq = max($0.lastSeq, call.seq) }
    }

    /// Starts delivering `connection`'s events to this client.
    func startReading(_ connection: ClientConnection) {
        connection.start(
            onPush: { [weak self] push in
                switch push {
                case .call(let call): self?.deliver(call)
                case .signal(let signal): self?.eventSink.yield(.signal(signal))
                // Only a connection without credentials hands on raw frames.
                case .frame: break
                }
            },
            onClose: { [weak self, weak connection] error in
                guard let self, let connection else { return }
                self.connectionClosed(connection, error: error)
            })
    }

    /// Hands a call event to both streams (a resume's calls too, before
    /// ``ClientEvent/reconnected(activeCall:endpoint:)``).
    func deliver(_ call: Call) {
        saw(call)
        eventSink.yield(.call(call))
        if let notification = CallNotification(call: call, uid: uid, deviceId: deviceId) {
            notificationSink.yield(notification)
        }
    }

    /// The reader of `connection` ended with `error`: finish, or start reconnecting.
    private func connectionClosed(_ connection: ClientConnection, error: ClientError) {
        let reconnecting = state.withLock { state -> Bool in
            guard case .connected(let current) = state.phase, current === connection else { return false }
            guard !state.closing, options.reconnect,
                WebSocketCloseCode.allowsReconnect(afterClose: error.closeCode)
            else {
                state.enter(.finished)
                finishStreams(error)
                return false
            }
            eventSink.yield(.reconnecting(error))
            state.enter(.reconnecting)
            return true
        }
        if reconnecting { startReconnecting(after: error) }
    }

    /// Ends both streams with ``ClientEvent/disconnected(_:)`` (call with the state locked).
    func finishStreams(_ error: ClientError) {
        eventSink.yield(.disconnected(error))
        eventSink.finish()
        notificationSink.finish()
    }

    /// Drops the TCP connection without a close handshake, as a network failure would (for tests).
    func dropConnectionForTesting() {
        if case .connected(let connection) = state.withLock({ $0.phase }) { connection.abort() }
    }
}
