import Foundation
import SignalProtocol
import SignalSystem
import Synchronization

/// One authenticated WebSocket connection: sends requests and matches their
/// results, and runs the one reader thread that reads every server frame,
/// answers pings, completes the close handshake, and reports call events and
/// the end of the connection.
final class ClientConnection: Sendable {
    /// How long to wait for the server to close TCP once the close frames crossed.
    static let closeLinger = 2.0

    /// The auth result of this connection.
    let auth: Authentication
    private let sender: WebSocketSender
    private let pending = PendingRequests()
    private let nextRequestID = Atomic<Int>(2)
    private let requestTimeout: Double
    private let keepAliveInterval: Double
    private let ended = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Whether this connection agreed on permessage-deflate.
    var compresses: Bool { sender.compresses }

    /// Takes over an opened connection; nothing is read until ``start(_:onCall:onClose:)``.
    init(_ opened: OpenedConnection, options: ConnectOptions) {
        auth = opened.auth
        sender = opened.sender
        requestTimeout = options.requestTimeout
        keepAliveInterval = options.keepAliveInterval
    }

    /// Starts the reader thread. `onCall` gets every call event in order;
    /// `onClose` runs once when the connection is gone (after every event).
    func start(_ receiver: WebSocketReceiver, onCall: @escaping @Sendable (Call) -> Void,
               onClose: @escaping @Sendable (ClientError) -> Void) {
        let thread = Thread { [self] in
            var receiver = receiver
            let error = readUntilClosed(&receiver, onCall: onCall)
            sender.socket.close()
            pending.failAll(error.code == ClientErrorCode.closed
                ? error : .closed("the connection closed: \(error.message)", closeCode: error.closeCode))
            onClose(error)
            let waiters = ended.withLock { state in
                state.done = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.name = "ringd-client-reader"
        thread.start()
    }

    /// Sends `request` and waits for its result (at most the request timeout).
    func request(_ request: ClientRequest) async -> PendingRequests.Outcome {
        let id = String(nextRequestID.wrappingAdd(1, ordering: .relaxed).oldValue)
        let frame = ClientFrame(id: id, request: request), type = request.type
        let pending = self.pending, timeout = requestTimeout
        var timer: Task<Void, Never>?
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<PendingRequests.Outcome, Never>) in
            guard pending.register(id, answering: type, continuation) else { return }
            timer = Task {
                try? await Task.sleep(for: .seconds(timeout))
                guard !Task.isCancelled else { return }
                pending.complete(id, with: .failure(.timeout("no result for \(type.rawValue) within \(timeout)s")))
            }
            do throws(ClientError) {
                try sender.send(frame)
            } catch {
                pending.complete(id, with: .failure(error))
            }
        }
        timer?.cancel()
        return outcome
    }

    /// Sends a close frame with `code` (once), starting the close handshake.
    func beginClose(code: WebSocketCloseCode = .normalClosure) {
        sender.sendClose(code: code)
    }

    /// Drops the connection at once, without a close handshake: the reader
    /// thread wakes, fails what is pending and reports the close.
    func abort() {
        sender.socket.shutdown()
    }

    /// Returns once the reader thread has finished (after `onClose` ran).
    func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = ended.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    /// The reader thread's loop; returns why the connection ended. A server
    /// silent for the keep-alive interval is pinged; silent as long again, it is lost.
    private func readUntilClosed(_ receiver: inout WebSocketReceiver, onCall: @Sendable (Call) -> Void) -> ClientError {
        var lingerDeadline: Deadline?
        var quietSince = Deadline.now()
        var pinged = false
        var closeFrame: (code: WebSocketCloseCode?, reason: String, initiatedByUs: Bool)?
        while true {
            let event: WebSocketMessageReader.Event
            do {
                event = try receiver.next(until: lingerDeadline ?? quietSince.adding(seconds: keepAliveInterval))
            } catch .socket(.timedOut) where lingerDeadline == nil {
                if pinged {
                    return .closed("the connection was lost: the server did not answer a ping within \(keepAliveInterval)s")
                }
                try? sender.sendPing()
                pinged = true
                quietSince = Deadline.now()
                continue
            } catch {
                if let closeFrame { return Self.closedError(closeFrame) }
                return endError(error)
            }
            quietSince = Deadline.now()
            pinged = false
            switch event {
            case .message(let message):
                dispatch(message, onCall: onCall)
            case .ping(let payload):
                try? sender.sendPong(payload)
            case .pong:
                continue
            case .close(let code, let reason):
                guard closeFrame == nil else { continue }
                let echoed = sender.sendClose(code: code)
                closeFrame = (code, reason, !echoed)
                lingerDeadline = Deadline.now().adding(seconds: Self.closeLinger)
            }
        }
    }

    private func dispatch(_ message: WebSocketMessage, onCall: @Sendable (Call) -> Void) {
        guard message.kind == .text, let json = try? JSONValue.parse(message.payload) else { return }
        let frame: ServerFrame
        do {
            frame = try ServerFrame(json: json)
        } catch {
            if let id = json["id"]?.stringValue {
                pending.complete(id, with: .failure(.protocolViolation("malformed result: \(error.message)")))
            }
            return
        }
        switch frame {
        case .call(let call):
            onCall(call)
        case .result(let id?, let outcome):
            pending.complete(id, with: outcome.mapError(ClientError.init))
        case .result(nil, _):
            return
        }
    }

    private static func closedError(_ frame: (code: WebSocketCloseCode?, reason: String, initiatedByUs: Bool)) -> ClientError {
        let code = frame.code?.rawValue
        if frame.initiatedByUs { return .closed("closed by the client", closeCode: code) }
        let reason = frame.reason.isEmpty ? "" : " (\(frame.reason))"
        return .closed("closed by the server with code \(code.map(String.init) ?? "none")\(reason)", closeCode: code)
    }

    private func endError(_ failure: WebSocketReceiver.Failure) -> ClientError {
        switch failure {
        case .protocolViolation(let error):
            sender.sendClose(code: error.closeCode, reason: error.reason)
            return .protocolViolation("the server broke the WebSocket protocol: \(error.reason)")
        case .socket where sender.hasSentClose:
            return .closed("closed by the client; the server did not answer the close frame")
        case .socket(.endOfStream), .socket(.timedOut):
            return .closed("the connection was lost: it closed without a close frame")
        case .socket(.system(let error)):
            return .closed("the connection was lost: \(error)")
        case .socket(.tls(let error)):
            return .closed("the TLS session failed: \(error.message)")
        }
    }
}
