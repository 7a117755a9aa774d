import SignalCrypto
import SignalProtocol

/// The server side of the WebSocket opening handshake (RFC 6455 §4.2).
public enum WebSocketHandshake {
    /// The `Sec-WebSocket-Accept` value for a client key: base64(SHA-1(key + GUID)).
    public static func acceptValue(forKey key: String) -> String {
        Crypto.webSocketAccept(forKey: key)
    }

    /// Checks an upgrade request. Returns the 101 response to send, or the
    /// error response explaining what is wrong (400, 405 or 426).
    public static func respond(to request: HTTPRequest) -> Result<HTTPResponse, HTTPResponseError> {
        guard request.method == "GET" else {
            return .failure(
                HTTPResponseError(
                    .error(
                        .methodNotAllowed, "WebSocket upgrades use GET",
                        headers: HTTPHeaders([("Allow", "GET")]))))
        }
        guard request.headers.tokens("Upgrade").contains("websocket") else {
            return .failure(
                HTTPResponseError(
                    .error(
                        .upgradeRequired, "this resource speaks WebSocket only",
                        headers: HTTPHeaders([("Upgrade", "websocket")]))))
        }
        guard request.minorVersion >= 1 else {
            return .failure(HTTPResponseError(.error(.badRequest, "WebSocket upgrades need HTTP/1.1")))
        }
        guard request.headers.tokens("Connection").contains("upgrade") else {
            return .failure(HTTPResponseError(.error(.badRequest, "the Connection header must contain \"upgrade\"")))
        }
        guard request.headers.values("Sec-WebSocket-Version") == ["13"] else {
            return .failure(
                HTTPResponseError(
                    .error(
                        .upgradeRequired, "only WebSocket version 13 is supported",
                        headers: HTTPHeaders([("Sec-WebSocket-Version", "13")]))))
        }
        let keys = request.headers.values("Sec-WebSocket-Key")
        guard keys.count == 1, let key = keys.first, Base64.decode(key)?.count == 16 else {
            return .failure(
                HTTPResponseError(
                    .error(
                        .badRequest,
                        "Sec-WebSocket-Key must be the base64 of 16 bytes")))
        }
        return .success(
            HTTPResponse(
                status: .switchingProtocols,
                headers: HTTPHeaders([
                    ("Upgrade", "websocket"),
                    ("Connection", "Upgrade"),
                    ("Sec-WebSocket-Accept", acceptValue(forKey: key)),
                ])))
    }

    /// Picks the first acceptable permessage-deflate offer of the request
    /// (RFC 7692 §5) and adds the answer to `response`; returns the agreed
    /// parameters, nil when compression is off or nothing acceptable was
    /// offered. A `Sec-WebSocket-Extensions` header that breaks the grammar
    /// fails with 400.
    public static func negotiateCompression(
        _ request: HTTPRequest, settings: WebSocketCompressionSettings?,
        into response: inout HTTPResponse
    )
        -> Result<PerMessageDeflateParameters?, HTTPResponseError>
    {
        let offers = request.headers.values("Sec-WebSocket-Extensions")
        guard let settings, !offers.isEmpty else { return .success(nil) }
        do {
            guard
                let agreed = try PerMessageDeflateNegotiation.accept(
                    offers: offers,
                    contextTakeover: settings.contextTakeover)
            else {
                return .success(nil)
            }
            response.headers.add("Sec-WebSocket-Extensions", agreed.headerValue)
            return .success(agreed)
        } catch {
            return .failure(HTTPResponseError(.error(.badRequest, "Sec-WebSocket-Extensions: \(error.message)")))
        }
    }
}

/// An error response to send as it is.
public struct HTTPResponseError: Error, Sendable {
    public let response: HTTPResponse

    public init(_ response: HTTPResponse) { self.response = response }
}
