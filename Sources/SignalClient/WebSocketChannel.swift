import SignalProtocol
import SignalSystem
import Synchronization

/// The sending half of a client WebSocket: masked frames, one at a time, and
/// nothing after the close frame.
final class WebSocketSender: Sendable {
    /// The socket the frames go out on.
    let socket: TCPSocket
    /// How long one frame may take to leave.
    private let sendTimeout: Double
    /// Whether a close frame was sent (no frame may follow it).
    private let closeSent = Mutex(false)

    /// A sender on `socket`.
    init(socket: TCPSocket, sendTimeout: Double) {
        self.socket = socket
        self.sendTimeout = sendTimeout
    }

    /// Whether the close frame went out.
    var hasSentClose: Bool { closeSent.withLock { $0 } }

    /// Sends one JSON text frame. A send that fails part-way shuts the socket
    /// down, since the stream can no longer be framed.
    func sendText(_ json: JSONValue) throws(ClientError) {
        var payload: [UInt8] = []
        json.write(into: &payload)
        try send(.text, payload)
    }

    /// Answers a ping.
    func sendPong(_ payload: [UInt8]) throws(ClientError) {
        try send(.pong, payload)
    }

    /// Asks the server for a sign of life.
    func sendPing() throws(ClientError) {
        try send(.ping, [])
    }

    /// Sends the close frame unless one was sent already; returns whether it
    /// sent it. `code` nil sends an empty close frame (the echo of an empty one).
    @discardableResult
    func sendClose(code: WebSocketCloseCode?, reason: String = "") -> Bool {
        let payload = code.map { WebSocketFrameEncoder.closePayload(code: $0, reason: reason) } ?? []
        do {
            return try closeSent.withLock { (sent: inout Bool) throws(ClientError) -> Bool in
                guard !sent else { return false }
                sent = true
                try transmit(.close, payload)
                return true
            }
        } catch {
            return true
        }
    }

    private func send(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws(ClientError) {
        try closeSent.withLock { (sent: inout Bool) throws(ClientError) in
            guard !sent else { throw .closed("the connection is closing") }
            try transmit(opcode, payload)
        }
    }

    private func transmit(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws(ClientError) {
        let frame = WebSocketFrameEncoder.frame(opcode, payload: payload, maskKey: .random())
        do {
            try socket.sendAll(frame, deadline: Deadline.now().adding(seconds: sendTimeout))
        } catch {
            socket.shutdown()
            switch error {
            case .timedOut: throw .timeout("sending a frame took longer than \(sendTimeout)s")
            case .endOfStream: throw .closed("the connection closed")
            case .system(let error): throw .closed("the connection was lost: \(error)")
            case .tls(let error): throw .closed("the TLS session failed: \(error.message)")
            }
        }
    }
}

/// The receiving half of a client WebSocket: reads server frames off the
/// socket and turns them into messages and control frames. Owned by one thread.
struct WebSocketReceiver: Sendable {
    /// The largest message accepted from the server.
    static let maxMessageBytes = 4 * 1024 * 1024

    private let socket: TCPSocket
    private var reader = WebSocketMessageReader(role: .client, maxMessageBytes: maxMessageBytes)
    private var pending: [UInt8]

    /// Why receiving stopped.
    enum Failure: Error {
        /// The socket failed, ended or timed out.
        case socket(SocketFailure)
        /// The server broke RFC 6455; fail the connection with the error's close code.
        case protocolViolation(WebSocketProtocolError)
    }

    /// A receiver on `socket`; `leftover` are bytes already read past the upgrade response.
    init(socket: TCPSocket, leftover: [UInt8]) {
        self.socket = socket
        pending = leftover
    }

    /// The next message or control frame, reading until `deadline` (nil: forever).
    mutating func next(until deadline: Deadline?) throws(Failure) -> WebSocketMessageReader.Event {
        while true {
            if !pending.isEmpty {
                reader.append(contentsOf: pending)
                pending.removeAll(keepingCapacity: true)
            }
            do {
                if let event = try reader.next() { return event }
            } catch {
                throw .protocolViolation(error)
            }
            do {
                try socket.receive(into: &pending, until: deadline)
            } catch {
                throw .socket(error)
            }
        }
    }
}
