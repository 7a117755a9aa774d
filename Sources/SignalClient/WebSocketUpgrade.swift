import SignalCrypto
import SignalProtocol
import SignalSystem

/// The client side of the WebSocket opening handshake (RFC 6455 §4.1).
enum WebSocketUpgrade {
    /// An upgraded connection.
    struct Upgraded {
        /// The connected socket.
        var socket: TCPSocket
        /// Bytes already read past the 101 response.
        var leftover: [UInt8]
        /// The agreed permessage-deflate parameters; nil without compression.
        var deflate: PerMessageDeflateParameters?
    }

    /// Connects to `endpoint` (with TLS for `wss://`, verified as
    /// `verification` says) and upgrades to a WebSocket, offering
    /// permessage-deflate when `compression`; the TCP connect, the TLS
    /// handshake and the upgrade each within `timeout` seconds.
    static func open(_ endpoint: ServerEndpoint, verification: TLSVerification, timeout: Double,
                     compression: Bool) throws(ClientError) -> Upgraded {
        let socket = try TCPSocket.connect(to: endpoint, verification: verification, timeout: timeout)
        do {
            let offer = compression ? PerMessageDeflateParameters.clientOffer : nil
            let (leftover, deflate) = try upgrade(socket, endpoint: endpoint, offer: offer,
                                                  deadline: Deadline.now().adding(seconds: timeout))
            return Upgraded(socket: socket, leftover: leftover, deflate: deflate)
        } catch {
            socket.close()
            throw error
        }
    }

    private static func upgrade(_ socket: TCPSocket, endpoint: ServerEndpoint, offer: PerMessageDeflateParameters?,
                                deadline: Deadline) throws(ClientError) -> ([UInt8], PerMessageDeflateParameters?) {
        var generator = SystemRandomNumberGenerator()
        let key = Base64.encode((0 ..< 16).map { _ in UInt8.random(in: 0 ... 255, using: &generator) })
        let request = "GET \(endpoint.path) HTTP/1.1\r\n"
            + "Host: \(endpoint.hostAndPort)\r\n"
            + "Upgrade: websocket\r\n"
            + "Connection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: \(key)\r\n"
            + (offer.map { "Sec-WebSocket-Extensions: \($0.headerValue)\r\n" } ?? "")
            + "\r\n"
        do {
            try socket.sendAll(Array(request.utf8), deadline: deadline)
        } catch {
            throw failed("sending the upgrade request failed: \(error)")
        }
        var reader = HTTPResponseReader(socket: socket)
        let head = try reader.readHead(until: deadline)
        guard head.status == 101 else {
            let body = (try? reader.readBody(of: head, until: deadline)) ?? []
            let (code, message) = HTTPResponseReader.errorMessage(in: body)
            let detail = [code, message.isEmpty ? nil : message].compactMap { $0 }.joined(separator: ": ")
            throw ClientError(code: ClientErrorCode.handshakeFailed,
                              message: "HTTP \(head.status) \(head.reason)" + (detail.isEmpty ? "" : ": \(detail)"),
                              httpStatus: head.status)
        }
        guard head.tokens("Upgrade").contains("websocket") else {
            throw failed("the 101 response lacks Upgrade: websocket")
        }
        guard head.tokens("Connection").contains("upgrade") else {
            throw failed("the 101 response lacks Connection: Upgrade")
        }
        guard head.value("Sec-WebSocket-Accept") == Crypto.webSocketAccept(forKey: key) else {
            throw failed("the server's Sec-WebSocket-Accept does not match the key")
        }
        do {
            let deflate = try PerMessageDeflateNegotiation.validate(response: head.values("Sec-WebSocket-Extensions"),
                                                                    offer: offer)
            return (reader.buffered, deflate)
        } catch {
            throw failed("the server's Sec-WebSocket-Extensions answer is invalid: \(error.message)")
        }
    }

    private static func failed(_ message: String) -> ClientError {
        ClientError(code: ClientErrorCode.handshakeFailed, message: message)
    }
}
