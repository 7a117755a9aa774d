import SignalProtocol
import SignalSystem

/// An upgraded, authenticated connection whose reader has not started yet.
struct OpenedConnection: Sendable {
    /// Sends frames.
    var sender: WebSocketSender
    /// Receives frames, holding any bytes read past the auth result.
    var receiver: WebSocketReceiver
    /// The auth result.
    var auth: Authentication
}

/// Opens a connection and authenticates it, blocking the calling thread
/// (run it off the caller's executor; see ``runBlocking(_:)``).
enum ConnectionOpener {
    /// The id of the auth frame (the first request on every connection).
    static let authRequestID = "1"

    /// Connects, upgrades (offering permessage-deflate when the options ask)
    /// and sends `auth` as the options' device, waiting the request timeout
    /// for its result. An error result throws the server's code (and the
    /// connection is closed).
    static func open(_ endpoint: ServerEndpoint, credentials: Credentials,
                     options: ConnectOptions) throws(ClientError) -> OpenedConnection {
        let deviceId = options.deviceId, requestTimeout = options.requestTimeout
        let upgraded = try WebSocketUpgrade.open(endpoint, verification: options.tlsVerification,
                                                 timeout: options.connectTimeout, compression: options.compression)
        let socket = upgraded.socket
        let sender = WebSocketSender(socket: socket, sendTimeout: requestTimeout, deflate: upgraded.deflate?.clientToServer)
        var receiver = WebSocketReceiver(socket: socket, leftover: upgraded.leftover, deflate: upgraded.deflate?.serverToClient)
        do {
            try sender.send(ClientFrame(id: authRequestID, request: .auth(credentials, deviceId: deviceId)))
            let auth = try awaitAuthResult(&receiver, sender: sender,
                                           deadline: Deadline.now().adding(seconds: requestTimeout))
            return OpenedConnection(sender: sender, receiver: receiver, auth: auth)
        } catch {
            sender.sendClose(code: .normalClosure)
            socket.close()
            throw error
        }
    }

    private static func awaitAuthResult(_ receiver: inout WebSocketReceiver, sender: WebSocketSender,
                                        deadline: Deadline) throws(ClientError) -> Authentication {
        while true {
            let event: WebSocketMessageReader.Event
            do {
                event = try receiver.next(until: deadline)
            } catch {
                throw authFailure(error, sender: sender)
            }
            switch event {
            case .message(let message):
                guard message.kind == .text, let json = try? JSONValue.parse(message.payload),
                      let frame = try? ServerFrame(json: json) else {
                    throw .protocolViolation("the server answered auth with a frame that is not a result")
                }
                switch frame {
                case .result(let id, .success(let data)) where id == authRequestID || id == nil:
                    guard case .authenticated(let authentication) = try PendingRequests.decode(data, answering: .auth) else {
                        throw .protocolViolation("the auth result is not an authentication")
                    }
                    return authentication
                case .result(let id, .failure(let error)) where id == authRequestID || id == nil:
                    throw ClientError(error)
                case .result, .call:
                    continue
                }
            case .ping(let payload):
                try sender.sendPong(payload)
            case .pong:
                continue
            case .close(let code, let reason):
                sender.sendClose(code: code)
                let detail = reason.isEmpty ? "" : " (\(reason))"
                throw .closed("the server closed the connection during auth with code \(code?.rawValue ?? 1005)\(detail)",
                              closeCode: code?.rawValue)
            }
        }
    }

    private static func authFailure(_ failure: WebSocketReceiver.Failure, sender: WebSocketSender) -> ClientError {
        switch failure {
        case .socket(.timedOut):
            return .timeout("no auth result in time")
        case .socket(.endOfStream):
            return .closed("the server closed the connection during auth")
        case .socket(.system(let error)):
            return .closed("the connection was lost during auth: \(error)")
        case .socket(.tls(let error)):
            return .closed("the TLS session failed during auth: \(error.message)")
        case .protocolViolation(let error):
            sender.sendClose(code: error.closeCode, reason: error.reason)
            return .protocolViolation("the server broke the WebSocket protocol: \(error.reason)")
        }
    }
}
