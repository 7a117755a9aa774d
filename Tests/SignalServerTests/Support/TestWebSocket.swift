import SignalCompression
import SignalProtocol
import SignalServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh random `Sec-WebSocket-Key`: the base64 of 16 random bytes.
func randomWebSocketKey() -> String {
    var generator = SystemRandomNumberGenerator()
    return Base64.encode((0 ..< 16).map { _ in UInt8.random(in: 0 ... 255, using: &generator) })
}

/// An upgrade request for `path`; `headers` replaces the usual WebSocket
/// headers when given, so tests can leave some out or get them wrong.
func upgradeRequest(
    path: String = "/v1/ws", key: String, method: String = "GET", version: String = "HTTP/1.1",
    headers: [String]? = nil
) -> String {
    let lines =
        headers ?? [
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)",
            "Sec-WebSocket-Version: 13",
        ]
    return "\(method) \(path) \(version)\r\nHost: 127.0.0.1\r\n" + lines.map { $0 + "\r\n" }.joined() + "\r\n"
}

/// A client-side WebSocket over a ``TestSocket``: masks what it sends and
/// decodes what the server sends with a client-role message reader.
final class TestWebSocket {
    let socket: TestSocket
    private var reader: WebSocketMessageReader
    private var decompressor: MessageDecompressor?
    /// The server's `Sec-WebSocket-Extensions` answer, if any.
    private(set) var extensions: String?
    /// The most bytes taken per read, and a pause before each read: a slow reader.
    var readChunkSize = 65536
    var pauseBeforeRead: Double = 0

    /// Wraps a socket whose handshake is done; bytes already buffered after
    /// the 101 response are decoded first.
    /// `extensions` is the server's `Sec-WebSocket-Extensions` answer:
    /// compressed messages are inflated when it agreed to permessage-deflate.
    init(socket: TestSocket, maxMessageBytes: Int = 64 * 1024 * 1024, extensions: String? = nil) {
        self.socket = socket
        self.extensions = extensions
        let deflate = extensions.flatMap { try? PerMessageDeflateNegotiation.validate(response: [$0], offer: .init()) }
        reader = WebSocketMessageReader(
            role: .client, maxMessageBytes: maxMessageBytes, perMessageDeflate: deflate != nil)
        decompressor = deflate.map {
            MessageDecompressor(contextTakeover: $0.serverToClient.contextTakeover, cache: nil)
        }
        reader.append(contentsOf: socket.buffer)
        socket.buffer = []
    }

    /// Connects, performs the opening handshake and checks the 101 response.
    /// `firstBytes` are sent in the same write as the upgrade request;
    /// `offer` is sent as `Sec-WebSocket-Extensions`, `more` as further header lines.
    static func connect(
        port: Int, path: String = "/v1/ws", firstBytes: [UInt8] = [],
        receiveBufferSize: Int? = nil, offer: String? = nil, headers more: [String] = []
    ) throws -> TestWebSocket {
        let socket = try TestSocket(port: port, receiveBufferSize: receiveBufferSize)
        let key = randomWebSocketKey()
        let extraHeaders = offer.map { ["Sec-WebSocket-Extensions: \($0)"] } ?? []
        let headers =
            [
                "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: \(key)",
                "Sec-WebSocket-Version: 13",
            ] + extraHeaders + more
        try socket.send(Array(upgradeRequest(path: path, key: key, headers: headers).utf8) + firstBytes)
        let response = try socket.readResponse()
        guard response.status == 101 else {
            throw TestSocketError("handshake answered \(response.status): \(response.bodyText)")
        }
        guard response.header("Upgrade")?.lowercased() == "websocket",
            response.header("Connection")?.lowercased() == "upgrade",
            response.header("Sec-WebSocket-Accept") == WebSocketHandshake.acceptValue(forKey: key)
        else {
            throw TestSocketError("bad 101 headers: \(response.headers)")
        }
        return TestWebSocket(socket: socket, extensions: response.header("Sec-WebSocket-Extensions"))
    }

    // MARK: Sending

    /// Sends one masked frame.
    func send(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, reservedBits: UInt8 = 0) throws {
        try socket.send(
            WebSocketFrameEncoder.frame(
                opcode, payload: payload, fin: fin, reservedBits: reservedBits,
                maskKey: .random()))
    }

    func send(text: String) throws { try send(.text, Array(text.utf8)) }

    /// Sends a close frame with `code` and `reason`.
    func sendClose(_ code: UInt16, reason: String = "") throws {
        try send(.close, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    // MARK: Receiving

    /// The next event from the server; nil when the server closed TCP first.
    /// Throws on timeout or when the server breaks the protocol.
    func nextEvent(timeout: Double = 5) throws -> WebSocketMessageReader.Event? {
        let deadline = monotonicSeconds() + timeout
        while true {
            // Bytes a test peeked at in the socket's buffer are decoded first.
            reader.append(contentsOf: socket.buffer)
            socket.buffer = []
            if let event = try reader.next(inflater: &decompressor) { return event }
            if pauseBeforeRead > 0 { usleep(useconds_t(pauseBeforeRead * 1e6)) }
            if try socket.receiveSome(until: deadline, maxBytes: readChunkSize) == 0 { return nil }
        }
    }

    /// The next event, which must be a data message.
    func nextMessage(timeout: Double = 5) throws -> WebSocketMessage {
        switch try nextEvent(timeout: timeout) {
        case .message(let message): return message
        case let other: throw TestSocketError("expected a message, got \(String(describing: other))")
        }
    }

    /// Reads events until a close frame; returns its code (nil if the frame
    /// had none). Throws if TCP closes first.
    func nextClose(timeout: Double = 5) throws -> WebSocketCloseCode? {
        let deadline = monotonicSeconds() + timeout
        while true {
            switch try nextEvent(timeout: max(0.001, deadline - monotonicSeconds())) {
            case .close(let code, _): return code
            case nil: throw TestSocketError("TCP closed before a close frame")
            default: continue
            }
        }
    }

    /// Whether the server closes TCP within `timeout` with no further frames.
    func seesEOF(within timeout: Double = 5) -> Bool {
        guard socket.closesWithin(timeout) else { return false }
        reader.append(contentsOf: socket.buffer)
        socket.buffer = []
        return (try? reader.next()) == nil
    }

    func close() { socket.close() }
}
