import SignalProtocol
import SignalReactor

/// Speaks HTTP/1.1 on a fresh connection: parses requests (pipelined or
/// kept alive), routes them, and hands the connection to a ``WebSocket`` on a
/// successful upgrade. A request must arrive in full within the handshake
/// timeout of the connection's start or of the previous response.
///
/// While a response is deferred the connection does not read, so pipelined
/// requests wait in the socket, not here: at most one read's bytes are
/// buffered beyond a partial request.
final class HTTPConnectionHandler: ConnectionHandler {
    private let connection: Connection
    private let router: HTTPRouter
    private let settings: ServerConfig
    private var parser: HTTPRequestParser
    private var deadline: TimerID?
    /// The keep-alive flag of a request whose response is deferred; while
    /// set, further requests wait.
    private var deferredKeepAlive: Bool?

    /// Request bytes read and not handled yet (for tests of pipelining).
    var bufferedInputBytes: Int { parser.bufferedByteCount }

    init(connection: Connection, router: HTTPRouter, settings: ServerConfig) {
        self.connection = connection
        self.router = router
        self.settings = settings
        parser = HTTPRequestParser(maxBodyBytes: settings.maxRequestBodyBytes)
        armDeadline()
    }

    private func armDeadline() {
        if let timer = deadline { connection.loop.cancel(timer) }
        deadline = connection.loop.schedule(after: settings.handshakeTimeout) { [weak self] in
            self?.timedOut()
        }
    }

    private func timedOut() {
        deadline = nil
        if parser.hasPartialRequest {
            send(
                .error(.requestTimeout, "the request did not arrive within \(settings.handshakeTimeout)s"),
                keepAlive: false)
        } else {
            connection.closeAfterFlush()
        }
    }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        parser.append(bytes)
        processRequests()
    }

    private func processRequests() {
        do {
            while connection.state == .open, connection.handler === self, deferredKeepAlive == nil,
                let request = try parser.next()
            {
                handle(request)
            }
        } catch {
            Log.debug("\(connection.peer): bad request: \(error)")
            send(.error(error.status, error.message), keepAlive: false)
        }
    }

    func connectionDidClose(_ connection: Connection) {
        if let timer = deadline { connection.loop.cancel(timer) }
        deadline = nil
    }

    private func handle(_ request: HTTPRequest) {
        switch router.route(request, from: connection.peer) {
        case .respond(let response):
            send(response, keepAlive: request.keepAlive)
            if request.keepAlive { armDeadline() }
        case .later(let start):
            if let timer = deadline { connection.loop.cancel(timer) }
            deadline = nil
            deferredKeepAlive = request.keepAlive
            connection.holdReading(true)
            start(HTTPResponseSink(mailbox: connection.loop.mailbox, handler: LoopBound(self, on: connection.loop)))
        case .webSocket(let responder):
            switch WebSocketHandshake.respond(to: request) {
            case .failure(let error):
                send(error.response, keepAlive: false)
            case .success(var response):
                switch WebSocketHandshake.negotiateCompression(
                    request, settings: settings.webSocket.compression,
                    into: &response)
                {
                case .failure(let error):
                    send(error.response, keepAlive: false)
                case .success(let deflate):
                    upgrade(response, responder, deflate: deflate)
                }
            }
        }
    }

    /// Writes a deferred response and goes on with any requests that waited.
    func finishDeferred(_ response: HTTPResponse) {
        guard let keepAlive = deferredKeepAlive, connection.state == .open else { return }
        deferredKeepAlive = nil
        send(response, keepAlive: keepAlive)
        guard keepAlive else { return }
        armDeadline()
        processRequests()
        // Only now: a waiting request deferred in turn keeps the hold.
        if deferredKeepAlive == nil { connection.holdReading(false) }
    }

    private func upgrade(
        _ response: HTTPResponse, _ responder: WebSocketResponder, deflate: PerMessageDeflateParameters?
    ) {
        if let timer = deadline { connection.loop.cancel(timer) }
        deadline = nil
        connection.write(response.serialized(keepAlive: true))
        let socket = WebSocket(
            connection: connection, responder: responder, settings: settings.webSocket, deflate: deflate)
        connection.handler = socket
        socket.start(buffered: parser.takeBufferedBytes())
    }

    private func send(_ response: HTTPResponse, keepAlive: Bool) {
        connection.write(response.serialized(keepAlive: keepAlive))
        if !keepAlive { connection.closeAfterFlush() }
    }
}
