import SignalCompression
import SignalProtocol
import SignalReactor
import SignalSystem

/// A server-side WebSocket connection (RFC 6455) on one event loop: reads
/// frames through ``WebSocketMessageReader``, answers pings, runs the close
/// handshake, pings a quiet peer and drops a silent one. With
/// permessage-deflate it inflates compressed messages as they arrive and
/// compresses messages from the threshold up, borrowing zlib streams from
/// the loop's ``CompressionStreamCache`` where no context is kept.
public final class WebSocket: ConnectionHandler {
    /// Where the connection stands in its lifetime.
    enum State {
        /// Messages flow both ways.
        case open
        /// The server sent a close frame and waits for the peer's.
        case closeSent
        /// The close handshake finished or the connection failed.
        case closed
    }

    public var peer: SocketAddress { connection.peer }
    /// The event loop this connection lives on.
    public var loop: EventLoop { connection.loop }
    /// Records that the peer authenticated, so the connection no longer
    /// counts against `limits.maxUnauthenticatedConnections`.
    func markAuthenticated() { connection.markAuthenticated() }
    /// What is queued for the peer as the outbound limits count it, and
    /// whether a pong is held beside it (for tests of floods).
    var outbound: (queuedSize: Int, holdsPong: Bool) { (connection.queuedSize, connection.heldFrame != nil) }

    /// Seconds the server waits for the peer's close frame after sending its own.
    static let closeTimeout = 5.0

    private let connection: Connection
    private let responder: WebSocketResponder
    private let settings: WebSocketSettings
    private var reader: WebSocketMessageReader
    private var decompressor: MessageDecompressor?
    private var compressor: MessageCompressor?
    private(set) var state: State = .open
    private var lastHeard = Deadline.now()
    private var keepAliveTimer: TimerID?
    private var closeTimer: TimerID?
    /// The pongs to the pings of the bytes being read, in order, written as
    /// one chunk once those bytes are handled (or before what a message or a
    /// close makes us send): a pong per ping, as long as they fit below the
    /// connection's soft limit.
    private var pongs: [UInt8] = []
    /// The latest ping whose pong did not fit: past the soft limit only the
    /// latest ping needs an answer (RFC 6455 §5.5.3), so a peer that pings
    /// without reading is still read, and its pongs hold no more memory.
    private var coalescedPing: [UInt8]?

    init(
        connection: Connection, responder: WebSocketResponder, settings: WebSocketSettings,
        deflate: PerMessageDeflateParameters? = nil
    ) {
        self.connection = connection
        self.responder = responder
        self.settings = settings
        reader = WebSocketMessageReader(
            role: .server, maxMessageBytes: settings.maxMessageBytes,
            perMessageDeflate: deflate != nil)
        if let deflate {
            let cache = Self.compressionCache(of: connection.loop)
            decompressor = MessageDecompressor(contextTakeover: deflate.clientToServer.contextTakeover, cache: cache)
            compressor = MessageCompressor(deflate.serverToClient, cache: cache)
        }
    }

    /// The zlib streams the WebSockets of `loop` share.
    private static func compressionCache(of loop: EventLoop) -> CompressionStreamCache {
        if let cache = loop.attachment(CompressionStreamCache.self) { return cache }
        let cache = CompressionStreamCache()
        loop.attach(cache)
        return cache
    }

    /// Starts the keep-alive timer, tells the responder, and reads any bytes
    /// that arrived with the upgrade request.
    func start(buffered: [UInt8]) {
        scheduleKeepAlive()
        responder.webSocketDidOpen(self)
        guard !buffered.isEmpty, state != .closed else { return }
        reader.append(contentsOf: buffered)
        readEvents()
    }

    // MARK: Sending

    /// Sends a message, compressed (RSV1) when permessage-deflate was agreed
    /// and it has at least the threshold's bytes; header and payload leave in
    /// one `writev`.
    public func send(_ message: WebSocketMessage) {
        guard state == .open else { return }
        let opcode: WebSocketOpcode = message.kind == .text ? .text : .binary
        guard var compressor, let threshold = settings.compression?.thresholdBytes else {
            connection.write(
                WebSocketFrameEncoder.header(opcode, payloadLength: message.payload.count), message.payload)
            return
        }
        do {
            let (payload, reservedBits) = try compressor.encode(message.payload, threshold: threshold)
            self.compressor = compressor
            connection.write(
                WebSocketFrameEncoder.header(opcode, payloadLength: payload.count, reservedBits: reservedBits),
                payload)
        } catch {
            Log.warning("\(peer): compressing a message failed: \(error)")
            fail(error.protocolError)
        }
    }

    /// Starts the close handshake; the connection closes when the peer answers
    /// or after the close timeout.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        guard state == .open else { return }
        state = .closeSent
        sendControl(.close, WebSocketFrameEncoder.closePayload(code: code, reason: reason))
        closeTimer = loop.schedule(after: Self.closeTimeout) { [weak self] in
            self?.finish(code: code, closeTransport: true)
        }
    }

    /// Drops the connection with a TCP reset, sending no close frame.
    func reset() { connection.reset() }

    private func sendControl(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        connection.write(WebSocketFrameEncoder.header(opcode, payloadLength: payload.count), payload)
    }

    // MARK: Receiving

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        lastHeard = Deadline.now()
        reader.append(bytes)
        readEvents()
    }

    func connectionDidClose(_ connection: Connection) {
        finish(code: .abnormalClosure, closeTransport: false)
    }

    private func readEvents() {
        do {
            while state != .closed, let event = try reader.next(inflater: &decompressor) {
                handle(event)
            }
        } catch {
            Log.debug("\(peer): failing WebSocket: \(error)")
            fail(error)
        }
        answerPings()
    }

    /// Queues the pong to a ping, or replaces the coalesced one once the
    /// pongs no longer fit below the soft limit (and then until they are sent,
    /// so the answers stay in order).
    private func queuePong(_ payload: [UInt8]) {
        let header = WebSocketFrameHeader(opcode: .pong, payloadLength: payload.count)
        if coalescedPing == nil, pongs.count + header.encodedSize + payload.count <= connection.roomBelowSoftLimit {
            header.encode(into: &pongs)
            pongs += payload
        } else {
            coalescedPing = payload
        }
    }

    /// Writes the pongs to the pings handled so far: those that fit, in one
    /// chunk, then the coalesced one.
    private func answerPings() {
        if !pongs.isEmpty {
            if state == .open { connection.write(pongs) }
            pongs = []
        }
        guard let payload = coalescedPing else { return }
        coalescedPing = nil
        // One frame (no separate header chunk) so a newer pong can replace it.
        if state == .open { connection.writeLatest(WebSocketFrameEncoder.frame(.pong, payload: payload)) }
    }

    /// Fails the connection with the error's close code.
    private func fail(_ error: WebSocketProtocolError) {
        answerPings()
        if state == .open {
            sendControl(.close, WebSocketFrameEncoder.closePayload(code: error.closeCode, reason: error.reason))
        }
        finish(code: error.closeCode, closeTransport: true)
    }

    private func handle(_ event: WebSocketMessageReader.Event) {
        switch event {
        case .message(let message):
            // Pings before a message are answered before what it makes us send.
            answerPings()
            if state == .open { responder.webSocket(self, didReceive: message) }
        case .ping(let payload):
            if state == .open { queuePong(payload) }
        case .pong:
            break
        case .close(let code, _):
            answerPings()
            if state == .open {
                // Echo the peer's code (RFC 6455 §5.5.1); an empty close is answered empty.
                sendControl(.close, code.map { WebSocketFrameEncoder.closePayload(code: $0, reason: "") } ?? [])
            }
            finish(code: code ?? .noStatusReceived, closeTransport: true)
        }
    }

    /// Ends the connection once: stops timers, closes the transport after the
    /// queued frames are out, and tells the responder.
    private func finish(code: WebSocketCloseCode, closeTransport: Bool) {
        guard state != .closed else { return }
        state = .closed
        if let timer = keepAliveTimer { loop.cancel(timer) }
        if let timer = closeTimer { loop.cancel(timer) }
        if closeTransport { connection.closeAfterFlush() }
        responder.webSocketDidClose(self, code: code)
    }

    // MARK: Keep-alive

    private func scheduleKeepAlive() {
        keepAliveTimer = loop.schedule(after: settings.pingInterval) { [weak self] in self?.keepAlive() }
    }

    /// Pings a peer quiet for a ping interval; gives up on one silent past the timeout.
    private func keepAlive() {
        guard state == .open else { return }
        let silence = Deadline.now().seconds(since: lastHeard)
        if silence >= settings.pingTimeout {
            Log.debug("\(peer): silent for \(silence)s, closing")
            sendControl(.close, WebSocketFrameEncoder.closePayload(code: .goingAway, reason: "ping timeout"))
            finish(code: .goingAway, closeTransport: true)
            return
        }
        if silence >= settings.pingInterval * 0.5 {
            sendControl(.ping, [])
        }
        scheduleKeepAlive()
    }
}
