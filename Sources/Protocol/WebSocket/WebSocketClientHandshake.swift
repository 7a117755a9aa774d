/// The client side of the WebSocket opening handshake (RFC 6455 §4.1): the
/// upgrade request, and the checks of the server's answer. Pure, so that
/// the blocking client and the benchmark's event loop share one definition.
public struct WebSocketClientHandshake: Sendable {
    /// The `Sec-WebSocket-Key`: 16 random bytes in base64.
    public let key: String
    public let offer: PerMessageDeflateParameters?

    /// A handshake with a fresh random key.
    public init(offer: PerMessageDeflateParameters?) {
        var generator = SystemRandomNumberGenerator()
        self.init(
            key: Base64.encode((0 ..< 16).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }), offer: offer)
    }

    public init(key: String, offer: PerMessageDeflateParameters?) {
        self.key = key
        self.offer = offer
    }

    /// The upgrade request for `path` on `host` (the `Host` header's value).
    public func request(path: String, host: String) -> [UInt8] {
        let request =
            "GET \(path) HTTP/1.1\r\n"
            + "Host: \(host)\r\n"
            + "Upgrade: websocket\r\n"
            + "Connection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: \(key)\r\n"
            + (offer.map { "Sec-WebSocket-Extensions: \($0.headerValue)\r\n" } ?? "")
            + "\r\n"
        return Array(request.utf8)
    }

    /// Checks the server's answer `head`; `accept` is the
    /// `Sec-WebSocket-Accept` value `key` calls for (SHA-1 lives outside
    /// this module). Returns the agreed permessage-deflate parameters, nil
    /// without compression.
    public func validate(
        _ head: HTTPResponseHead,
        accept: String
    ) throws(WebSocketHandshakeError) -> PerMessageDeflateParameters? {
        guard head.status == 101 else { throw .refused(status: head.status, reason: head.reason) }
        guard head.tokens("Upgrade").contains("websocket") else {
            throw .invalid("the 101 response lacks Upgrade: websocket")
        }
        guard head.tokens("Connection").contains("upgrade") else {
            throw .invalid("the 101 response lacks Connection: Upgrade")
        }
        guard head.value("Sec-WebSocket-Accept") == accept else {
            throw .invalid("the server's Sec-WebSocket-Accept does not match the key")
        }
        do {
            return try PerMessageDeflateNegotiation.validate(
                response: head.values("Sec-WebSocket-Extensions"), offer: offer)
        } catch {
            throw .invalid("the server's Sec-WebSocket-Extensions answer is invalid: \(error.message)")
        }
    }
}

/// Why the server's answer to the upgrade request does not open a WebSocket.
public enum WebSocketHandshakeError: Error, Hashable, Sendable {
    /// The server answered with another status than 101 (its body may say why).
    case refused(status: Int, reason: String)
    /// A 101 that breaks RFC 6455 §4.2.2 or the extension negotiation.
    case invalid(String)
}
