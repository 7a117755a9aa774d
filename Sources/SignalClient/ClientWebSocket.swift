import SignalCompression
import SignalCrypto
import SignalProtocol
import SignalReactor
import SignalSystem

/// One signaling WebSocket on the client I/O loop: the upgrade and `auth`,
/// then requests matched to their results, call events, pings both ways and
/// the close handshake. Without credentials it is a frame connection
/// (``FrameConnection``): no `auth`, and every text message goes to its
/// holder as it came, for a client that speaks the protocol itself. Its socket's registration with the loop keeps it
/// alive; what it learns goes to its ``ClientConnectionEvents``.
final class ClientWebSocket: ClientSocketDelegate {
    /// The id of the auth frame (the first request on every connection).
    static let authRequestID = "1"
    /// How long to wait for the server to close TCP once the close frames crossed.
    static let closeLinger = 2.0
    /// The largest message accepted from the server.
    static let maxMessageBytes = 4 * 1024 * 1024
    /// Messages with fewer payload bytes are sent uncompressed.
    static let compressionThresholdBytes = 256

    /// What opening produced.
    struct Opened: Sendable {
        var webSocket: LoopBound<ClientWebSocket>
        /// The auth result; nil for a frame connection.
        var auth: Authentication?
        var compresses: Bool
    }

    private enum Phase {
        case connecting
        /// The upgrade request is out; the 101 has not arrived.
        case upgrading(WebSocketClientHandshake, HTTPResponseBuffer)
        /// The server refused the upgrade; its body (the reason) is arriving.
        case refused(HTTPResponseBuffer)
        case authenticating
        case open
        case closed
    }

    private struct Pending {
        var type: RequestType
        var timer: TimerID
        var completion: @Sendable (Result<ResultData, ClientError>) -> Void
    }

    private let loop: EventLoop
    private let endpoint: ServerEndpoint
    /// nil for a frame connection.
    private let credentials: Credentials?
    private let options: ConnectOptions
    private let events: ClientConnectionEvents
    private var opening: (@Sendable (Result<Opened, ClientError>) -> Void)?
    private var socket: ClientSocket?
    private var phase = Phase.connecting
    private var reader = WebSocketMessageReader(role: .client, maxMessageBytes: ClientWebSocket.maxMessageBytes)
    private var decompressor: MessageDecompressor?
    private var compressor: MessageCompressor?
    private var pending: [String: Pending] = [:]
    private var nextRequestID = 2
    /// The upgrade's or auth's deadline, then the close linger.
    private var timer: TimerID?
    private var closeSent = false
    private var closeFrame: (code: WebSocketCloseCode?, reason: String, initiatedByUs: Bool)?
    private var lastHeard = Deadline.now()
    private var pinged = false

    /// Connects to `addresses` of `endpoint`, upgrades and authenticates;
    /// `opening` gets the outcome, once.
    init(
        to addresses: [SocketAddress], of endpoint: ServerEndpoint, credentials: Credentials?, options: ConnectOptions,
        events: ClientConnectionEvents, on loop: EventLoop,
        opening: @escaping @Sendable (Result<Opened, ClientError>) -> Void
    ) {
        self.loop = loop
        self.endpoint = endpoint
        self.credentials = credentials
        self.options = options
        self.events = events
        self.opening = opening
        socket = ClientSocket(
            to: addresses, of: endpoint, verification: options.tlsVerification,
            timeout: options.connectTimeout, on: loop, delegate: self)
    }

    // MARK: Opening

    func socketDidConnect(_ socket: ClientSocket) {
        let handshake = WebSocketClientHandshake(offer: options.compression ? .clientOffer : nil)
        phase = .upgrading(handshake, HTTPResponseBuffer())
        socket.write(handshake.request(path: endpoint.path, host: endpoint.hostAndPort))
        arm(after: options.connectTimeout) { $0.failOpening(.timeout("timed out waiting for the HTTP response head")) }
    }

    private func upgraded(_ handshake: WebSocketClientHandshake, _ response: HTTPResponseBuffer) {
        guard let head = response.head else { return }
        let deflate: PerMessageDeflateParameters?
        do throws(WebSocketHandshakeError) {
            deflate = try handshake.validate(head, accept: Crypto.webSocketAccept(forKey: handshake.key))
        } catch {
            switch error {
            case .refused:
                phase = .refused(response)
                return refusedBody(ended: false)
            case .invalid(let message):
                return failOpening(ClientError(code: .handshakeFailed, message: message))
            }
        }
        if let deflate {
            reader = WebSocketMessageReader(
                role: .client, maxMessageBytes: Self.maxMessageBytes, perMessageDeflate: true)
            decompressor = MessageDecompressor(contextTakeover: deflate.serverToClient.contextTakeover, cache: nil)
            compressor = MessageCompressor(deflate.clientToServer, cache: nil)
        }
        guard let credentials else {
            becomeOpen(auth: nil)
            reader.append(contentsOf: response.rest)
            return drain()
        }
        phase = .authenticating
        let resume = options.deviceId.flatMap { id in
            options.resumeAfter.map { ResumePoint(deviceId: id, afterSeq: $0, epoch: options.resumeEpoch) }
        }
        send(
            .text,
            ClientFrame(
                id: Self.authRequestID,
                request: .auth(credentials, deviceId: options.deviceId, resume: resume)
            ).encoded)
        arm(after: options.requestTimeout) { $0.failOpening(.timeout("no auth result in time")) }
        reader.append(contentsOf: response.rest)
        drain()
    }

    /// Fails opening with the refusal once its body is complete (or the stream ended).
    private func refusedBody(ended: Bool) {
        guard case .refused(let response) = phase, let head = response.head else { return }
        let body: [UInt8]
        do {
            guard let complete = try response.body(ended: ended) else { return }
            body = complete
        } catch {
            body = []
        }
        let (code, message) = HTTPResponseBuffer.errorMessage(in: body)
        let detail = [code, message.isEmpty ? nil : message].compactMap { $0 }.joined(separator: ": ")
        failOpening(
            ClientError(
                code: .handshakeFailed,
                message: "HTTP \(head.status) \(head.reason)" + (detail.isEmpty ? "" : ": \(detail)"),
                httpStatus: head.status))
    }

    private func authResult(_ message: WebSocketMessage) {
        guard message.kind == .text, let frame = try? ServerFrame.parse(message.payload) else {
            return failOpening(.protocolViolation("the server answered auth with a frame that is not a result"))
        }
        switch frame {
        case .result(let id, .success(let data)) where id == Self.authRequestID || id == nil:
            guard case .authenticated(let auth)? = try? ResultData(json: data, answering: .auth) else {
                return failOpening(.protocolViolation("the auth result is malformed"))
            }
            becomeOpen(auth: auth)
        case .result(let id, .failure(let error)) where id == Self.authRequestID || id == nil:
            failOpening(ClientError(error), closeCode: .normalClosure)
        case .result, .call, .signal:
            return
        }
    }

    private func becomeOpen(auth: Authentication?) {
        phase = .open
        disarm()
        lastHeard = .now()
        scheduleKeepAlive(after: options.keepAliveInterval)
        let opened = Opened(webSocket: LoopBound(self, on: loop), auth: auth, compresses: compressor != nil)
        opening.take()?(.success(opened))
    }

    /// Ends the attempt: a close frame first when the WebSocket is up, then the socket.
    private func failOpening(_ error: ClientError, closeCode: WebSocketCloseCode? = nil) {
        guard let opening = opening.take() else { return }
        if let closeCode, case .authenticating = phase { sendClose(code: closeCode) }
        phase = .closed
        disarm()
        socket?.close()
        opening(.failure(error))
    }

    // MARK: Reading

    func socket(_ socket: ClientSocket, didRead bytes: UnsafeRawBufferPointer) {
        switch phase {
        case .upgrading(let handshake, var response):
            do {
                try response.append(bytes)
            } catch {
                return failOpening(error)
            }
            phase = .upgrading(handshake, response)
            upgraded(handshake, response)
        case .refused(var response):
            try? response.append(bytes)
            phase = .refused(response)
            refusedBody(ended: false)
        case .authenticating, .open:
            reader.append(bytes)
            drain()
        case .connecting, .closed:
            return
        }
    }

    private func drain() {
        while true {
            let event: WebSocketMessageReader.Event
            do {
                guard let next = try reader.next(inflater: &decompressor) else { return }
                event = next
            } catch {
                sendClose(code: error.closeCode, reason: error.reason)
                return fail(.protocolViolation("the server broke the WebSocket protocol: \(error.reason)"))
            }
            lastHeard = .now()
            pinged = false
            switch (event, phase) {
            case (.message(let message), .authenticating):
                authResult(message)
            case (.message(let message), .open):
                dispatch(message)
            case (.ping(let payload), _):
                send(.pong, payload)
            case (.close(let code, let reason), .authenticating):
                sendClose(code: code)
                let detail = reason.isEmpty ? "" : " (\(reason))"
                failOpening(
                    .closed(
                        "the server closed the connection during auth with code \(code?.rawValue ?? 1005)\(detail)",
                        closeCode: code?.rawValue))
            case (.close(let code, let reason), .open) where closeFrame == nil:
                let echoed = sendClose(code: code)
                closeFrame = (code, reason, !echoed)
                arm(after: Self.closeLinger) { $0.socket?.close() }
            case (.pong, _), (.close, _), (.message, _):
                break
            }
            switch phase {
            case .authenticating, .open: continue
            default: return
            }
        }
    }

    private func dispatch(_ message: WebSocketMessage) {
        guard message.kind == .text else { return }
        guard credentials != nil else {
            return events.pushed(.frame(String(decoding: message.payload, as: UTF8.self)))
        }
        switch ServerFrame.read(message.payload) {
        case .brokenAnswer(let id, let error):
            complete(id, with: .failure(.protocolViolation(error.message)))
        case .skipped:
            return
        case .frame(.call(let call)):
            events.pushed(.call(call))
        case .frame(.signal(let signal)):
            events.pushed(.signal(signal))
        case .frame(.result(let id?, let outcome)):
            complete(id, with: outcome.mapError(ClientError.init))
        case .frame(.result(nil, _)):
            return
        }
    }

    // MARK: Requests

    /// Sends `request`; `completion` gets its result's typed data, or why
    /// there is none (at most the request timeout later).
    func request(_ request: ClientRequest, completion: @escaping @Sendable (Result<ResultData, ClientError>) -> Void) {
        guard case .open = phase, !closeSent else {
            return completion(.failure(events.endError ?? .closed("the connection is closing")))
        }
        let id = String(nextRequestID)
        nextRequestID += 1
        let type = request.type, timeout = options.requestTimeout
        let timer = loop.schedule(after: timeout) { [weak self] in
            self?.complete(id, with: .failure(.timeout("no result for \(type.rawValue) within \(timeout)s")))
        }
        pending[id] = Pending(type: type, timer: timer, completion: completion)
        send(.text, ClientFrame(id: id, request: request).encoded)
    }

    /// Ends the wait for `id` with the result's raw `outcome`, decoded for
    /// the request it answers; nothing when no request waits (it timed out,
    /// or the id is not one of ours).
    private func complete(_ id: String, with outcome: Result<JSONValue, ClientError>) {
        guard let waiting = pending.removeValue(forKey: id) else { return }
        loop.cancel(waiting.timer)
        waiting.completion(
            outcome.flatMap { data in
                ResultData.decoding(data, answering: waiting.type).mapError { .protocolViolation($0.message) }
            })
    }

    // MARK: Writing

    /// Sends `text` as a text message (a frame connection's own frames);
    /// nothing once closing, when the close is on its way to the holder.
    func send(text: String) {
        guard case .open = phase else { return }
        send(.text, Array(text.utf8))
    }

    private func send(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        guard !closeSent else { return }
        var bytes = payload, reservedBits: UInt8 = 0
        if !opcode.isControl, var compressor {
            do {
                (bytes, reservedBits) = try compressor.encode(payload, threshold: Self.compressionThresholdBytes)
            } catch {
                return fail(.protocolViolation("compressing a message failed: \(error.message)"))
            }
            self.compressor = compressor
        }
        socket?.write(
            WebSocketFrameEncoder.frame(opcode, payload: bytes, reservedBits: reservedBits, maskKey: .random()))
    }

    /// Sends the close frame unless one was sent already; returns whether it
    /// sent it. `code` nil sends an empty close frame (the echo of an empty one).
    @discardableResult
    private func sendClose(code: WebSocketCloseCode?, reason: String = "") -> Bool {
        guard !closeSent else { return false }
        send(.close, code.map { WebSocketFrameEncoder.closePayload(code: $0, reason: reason) } ?? [])
        closeSent = true
        return true
    }

    // MARK: Keep-alive

    /// A server silent for the keep-alive interval is pinged; silent as long again, it is lost.
    private func scheduleKeepAlive(after seconds: Double) {
        loop.schedule(after: seconds) { [weak self] in self?.checkKeepAlive() }
    }

    private func checkKeepAlive() {
        guard case .open = phase, closeFrame == nil else { return }
        let interval = options.keepAliveInterval
        let quiet = Deadline.now().seconds(since: lastHeard)
        guard quiet >= interval else { return scheduleKeepAlive(after: interval - quiet) }
        if pinged {
            return fail(.closed("the connection was lost: the server did not answer a ping within \(interval)s"))
        }
        send(.ping, [])
        pinged = true
        lastHeard = .now()
        scheduleKeepAlive(after: interval)
    }

    // MARK: Closing

    /// Starts the close handshake with `code` (once).
    func beginClose(code: WebSocketCloseCode) {
        guard case .open = phase else { return }
        sendClose(code: code)
    }

    /// Drops the connection at once, without a close handshake.
    func abort() {
        socket?.close()
    }

    func socket(_ socket: ClientSocket, didEnd ending: SocketEnding) {
        self.socket = nil
        switch phase {
        case .connecting:
            if case .connectFailed(let error) = ending { return failOpening(error) }
            failOpening(.closed("the connection closed"))
        case .upgrading:
            failOpening(
                Self.openingError(
                    ending, during: "before the HTTP response head was complete",
                    reading: "reading the HTTP response head"))
        case .refused:
            refusedBody(ended: true)
        case .authenticating:
            failOpening(
                Self.openingError(ending, during: "during auth", reading: "the connection was lost during auth"))
        case .open:
            if let closeFrame { return fail(Self.closedError(closeFrame)) }
            fail(endError(ending))
        case .closed:
            return
        }
    }

    private static func openingError(_ ending: SocketEnding, during: String, reading: String) -> ClientError {
        switch ending {
        case .connectFailed(let error): return error
        case .endOfStream, .closed: return .closed("the server closed the connection \(during)")
        case .system(let error): return .closed("\(reading): \(error)")
        case .tls(let error): return .closed("the TLS session failed \(during): \(error.message)")
        }
    }

    private func endError(_ ending: SocketEnding) -> ClientError {
        if closeSent { return .closed("closed by the client; the server did not answer the close frame") }
        switch ending {
        case .system(let error): return .closed("the connection was lost: \(error)")
        case .tls(let error): return .closed("the TLS session failed: \(error.message)")
        case .connectFailed(let error): return error
        case .endOfStream, .closed: return .closed("the connection was lost: it closed without a close frame")
        }
    }

    private static func closedError(
        _ frame: (code: WebSocketCloseCode?, reason: String, initiatedByUs: Bool)
    ) -> ClientError {
        let code = frame.code?.rawValue
        if frame.initiatedByUs { return .closed("closed by the client", closeCode: code) }
        let reason = frame.reason.isEmpty ? "" : " (\(frame.reason))"
        return .closed("closed by the server with code \(code.map(String.init) ?? "none")\(reason)", closeCode: code)
    }

    /// The open connection ended with `error`: every waiting request fails,
    /// and the events hear of it last.
    private func fail(_ error: ClientError) {
        guard case .open = phase else { return }
        phase = .closed
        disarm()
        socket?.close()
        let failure =
            error.code == .closed
            ? error : .closed("the connection closed: \(error.message)", closeCode: error.closeCode)
        let waiting = pending.values
        pending = [:]
        for request in waiting {
            loop.cancel(request.timer)
            request.completion(.failure(failure))
        }
        events.closed(error, requestsFail: failure)
    }

    // MARK: Timer

    private func arm(after seconds: Double, _ action: @escaping (ClientWebSocket) -> Void) {
        disarm()
        timer = loop.schedule(after: seconds) { [weak self] in
            guard let self else { return }
            timer = nil
            action(self)
        }
    }

    private func disarm() {
        if let timer { loop.cancel(timer) }
        timer = nil
    }
}
