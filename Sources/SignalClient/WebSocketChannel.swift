import SignalCompression
import SignalProtocol
import SignalSystem
import Synchronization

/// The sending half of a client WebSocket: masked frames, one at a time, and
/// nothing after the close frame; with permessage-deflate, messages from
/// ``compressionThresholdBytes`` up are compressed.
final class WebSocketSender: Sendable {
    /// Messages with fewer payload bytes are sent uncompressed.
    static let compressionThresholdBytes = 256

    /// What the lock guards.
    struct State {
        /// Whether a close frame was sent (no frame may follow it).
        var closeSent = false
        /// The compressor, when permessage-deflate was agreed.
        var compressor: MessageCompressor?
    }

    /// The socket the frames go out on.
    let socket: TCPSocket
    /// How long one frame may take to leave.
    private let sendTimeout: Double
    private let state: Mutex<State>

    /// A sender on `socket`; `deflate` are the agreed client-to-server
    /// compression settings, nil without permessage-deflate.
    init(socket: TCPSocket, sendTimeout: Double, deflate: PerMessageDeflateDirection?) {
        self.socket = socket
        self.sendTimeout = sendTimeout
        state = Mutex(State(compressor: deflate.map { MessageCompressor($0, cache: nil) }))
    }

    /// Whether the close frame went out.
    var hasSentClose: Bool { state.withLock { $0.closeSent } }

    /// Whether permessage-deflate was agreed.
    var compresses: Bool { state.withLock { $0.compressor != nil } }

    /// Sends `frame` as a text frame. A send that fails part-way shuts the
    /// socket down, since the stream can no longer be framed.
    func send(_ frame: ClientFrame) throws(ClientError) {
        try send(.text, frame.encoded)
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
            return try state.withLock { (state: inout State) throws(ClientError) -> Bool in
                guard !state.closeSent else { return false }
                state.closeSent = true
                try transmit(.close, payload)
                return true
            }
        } catch {
            return true
        }
    }

    private func send(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws(ClientError) {
        try state.withLock { (state: inout State) throws(ClientError) in
            guard !state.closeSent else { throw .closed("the connection is closing") }
            guard !opcode.isControl, var compressor = state.compressor else {
                try transmit(opcode, payload)
                return
            }
            let encoded: (payload: [UInt8], reservedBits: UInt8)
            do throws(CompressionError) {
                encoded = try compressor.encode(payload, threshold: Self.compressionThresholdBytes)
            } catch {
                throw .protocolViolation("compressing a message failed: \(error.message)")
            }
            state.compressor = compressor
            try transmit(opcode, encoded.payload, reservedBits: encoded.reservedBits)
        }
    }

    private func transmit(_ opcode: WebSocketOpcode, _ payload: [UInt8], reservedBits: UInt8 = 0) throws(ClientError) {
        let frame = WebSocketFrameEncoder.frame(opcode, payload: payload, reservedBits: reservedBits, maskKey: .random())
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
    private var reader: WebSocketMessageReader
    private let decompressor: LockedDecompressor?
    private var pending: [UInt8]

    /// Why receiving stopped.
    enum Failure: Error {
        /// The socket failed, ended or timed out.
        case socket(SocketFailure)
        /// The server broke RFC 6455; fail the connection with the error's close code.
        case protocolViolation(WebSocketProtocolError)
    }

    /// A receiver on `socket`; `leftover` are bytes already read past the
    /// upgrade response; `deflate` are the agreed server-to-client
    /// compression settings, nil without permessage-deflate.
    init(socket: TCPSocket, leftover: [UInt8], deflate: PerMessageDeflateDirection?) {
        self.socket = socket
        pending = leftover
        reader = WebSocketMessageReader(role: .client, maxMessageBytes: Self.maxMessageBytes,
                                        perMessageDeflate: deflate != nil)
        decompressor = deflate.map { LockedDecompressor(contextTakeover: $0.contextTakeover) }
    }

    /// The next message or control frame, reading until `deadline` (nil: forever).
    mutating func next(until deadline: Deadline?) throws(Failure) -> WebSocketMessageReader.Event {
        while true {
            if !pending.isEmpty {
                reader.append(contentsOf: pending)
                pending.removeAll(keepingCapacity: true)
            }
            do {
                var inflater = decompressor
                if let event = try reader.next(inflater: &inflater) { return event }
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

/// The receiver's decompressor behind a lock, so that the receiver (and with
/// it the decompressor) can move from the connecting thread to the reader
/// thread. Only one thread uses it at a time; the lock is never contended.
final class LockedDecompressor: WebSocketMessageInflating, Sendable {
    private let decompressor: Mutex<MessageDecompressor>

    /// A decompressor for a direction with or without context takeover; it
    /// creates a zlib stream per message when the context is not kept.
    init(contextTakeover: Bool) {
        decompressor = Mutex(MessageDecompressor(contextTakeover: contextTakeover, cache: nil))
    }

    func inflate(_ compressed: [UInt8], into output: inout [UInt8], limit: Int) throws(WebSocketProtocolError) {
        try decompressor.withLock { (inflater: inout MessageDecompressor) throws(WebSocketProtocolError) in
            try inflater.inflate(compressed, into: &output, limit: limit)
        }
    }

    func finishMessage(into output: inout [UInt8], limit: Int) throws(WebSocketProtocolError) {
        try decompressor.withLock { (inflater: inout MessageDecompressor) throws(WebSocketProtocolError) in
            try inflater.finishMessage(into: &output, limit: limit)
        }
    }
}
