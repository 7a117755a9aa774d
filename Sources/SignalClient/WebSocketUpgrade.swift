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
        let handshake = WebSocketClientHandshake(offer: offer)
        do {
            try socket.sendAll(handshake.request(path: endpoint.path, host: endpoint.hostAndPort), deadline: deadline)
        } catch {
            throw failed("sending the upgrade request failed: \(error)")
        }
        var reader = HTTPResponseReader(socket: socket)
        let head = try reader.readHead(until: deadline)
        let deflate: PerMessageDeflateParameters?
        do throws(WebSocketHandshakeError) {
            deflate = try handshake.validate(head, accept: Crypto.webSocketAccept(forKey: handshake.key))
        } catch {
            switch error {
            case .refused(let status, let reason):
                let body = (try? reader.readBody(of: head, until: deadline)) ?? []
                let (code, message) = HTTPResponseReader.errorMessage(in: body)
                let detail = [code, message.isEmpty ? nil : message].compactMap { $0 }.joined(separator: ": ")
                throw ClientError(code: .handshakeFailed,
                                  message: "HTTP \(status) \(reason)" + (detail.isEmpty ? "" : ": \(detail)"),
                                  httpStatus: status)
            case .invalid(let message):
                throw failed(message)
            }
        }
        return (reader.buffered, deflate)
    }

    private static func failed(_ message: String) -> ClientError {
        ClientError(code: .handshakeFailed, message: message)
    }
}
