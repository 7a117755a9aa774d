/// A complete WebSocket data message.
public struct WebSocketMessage: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// UTF-8 text, already validated.
        case text
        /// Arbitrary bytes.
        case binary
    }

    public var kind: Kind
    /// The whole payload, unmasked and reassembled from its fragments.
    public var payload: [UInt8]

    public init(kind: Kind, payload: [UInt8]) {
        self.kind = kind
        self.payload = payload
    }

    public static func text(_ string: String) -> WebSocketMessage {
        WebSocketMessage(kind: .text, payload: Array(string.utf8))
    }

    /// The payload as a string (text messages are validated UTF-8).
    public var text: String { String(decoding: payload, as: UTF8.self) }
}

/// Turns a byte stream into messages and control frames (RFC 6455 §5.4–5.5):
/// reassembles fragments with control frames interleaved, validates text as
/// UTF-8 across fragments (failing at the first invalid byte), validates close
/// frames, and enforces the message size limit as soon as a frame header
/// reveals a length.
///
/// With permessage-deflate (RFC 7692) RSV1 on the first frame of a message
/// marks it compressed: its payload goes through the inflater passed to
/// ``next(inflater:)`` as it arrives, and the size limit and UTF-8 validation
/// apply to the inflated bytes. RSV1 on a continuation frame fails with 1002.
public struct WebSocketMessageReader: Sendable {
    /// Something the peer said.
    public enum Event: Hashable, Sendable {
        /// A complete text or binary message.
        case message(WebSocketMessage)
        /// A ping with its payload (answer it with a pong carrying the same bytes).
        case ping([UInt8])
        case pong([UInt8])
        /// A valid close frame: its code (nil when the frame had none) and reason.
        case close(code: WebSocketCloseCode?, reason: String)
    }

    /// The message being reassembled between its first and last data frame.
    enum Message: Sendable {
        /// No data message is in progress.
        case none
        /// A message of `kind` has `payload` so far (inflated); text carries
        /// its validator. `compressedBytes` counts the wire bytes of a
        /// compressed message, nil for an uncompressed one.
        case assembling(kind: WebSocketMessage.Kind, payload: [UInt8], utf8: UTF8Validator, compressedBytes: Int?)
    }

    /// The frame whose payload is arriving.
    enum Frame: Sendable {
        /// Between frames.
        case none
        /// A data frame (first or continuation); `fin` ends the message.
        case data(fin: Bool)
        /// A control frame, buffered whole (at most 125 bytes).
        case control(WebSocketOpcode, payload: [UInt8])
    }

    private var decoder: WebSocketFrameDecoder
    private var failed = false
    private var message: Message = .none
    private var frame: Frame = .none
    /// The largest message accepted, in bytes; bigger ones fail with 1009.
    /// For a compressed message this bounds the inflated size.
    public let maxMessageBytes: Int
    /// The most wire bytes a compressed message may take: twice the limit
    /// plus 1 KiB, far above what deflate's worst expansion of a message at
    /// the limit needs, so a stream of empty blocks cannot run on forever.
    public let maxCompressedBytes: Int

    /// A reader for the given end of the connection; `perMessageDeflate`
    /// when the extension was negotiated (RSV1 is then allowed).
    public init(role: WebSocketRole, maxMessageBytes: Int, perMessageDeflate: Bool = false) {
        decoder = WebSocketFrameDecoder(
            role: role, allowedReservedBits: perMessageDeflate ? WebSocketFrameHeader.rsv1 : 0)
        self.maxMessageBytes = maxMessageBytes
        let doubled = maxMessageBytes.multipliedReportingOverflow(by: 2)
        maxCompressedBytes =
            doubled.overflow || doubled.partialValue > Int.max - 1024 ? Int.max : doubled.partialValue + 1024
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        decoder.append(bytes)
    }

    public mutating func append<Bytes: Sequence<UInt8>>(contentsOf bytes: Bytes) {
        decoder.append(contentsOf: bytes)
    }

    /// The next event, nil when more bytes are needed. A thrown error means
    /// the connection must fail with the error's close code.
    /// After an error the reader stays failed and returns nil.
    public mutating func next() throws(WebSocketProtocolError) -> Event? {
        var inflater = WebSocketNoInflation()
        return try next(inflater: &inflater)
    }

    /// The next event, inflating compressed messages with `inflater` (the
    /// same one for every call on a connection); otherwise as ``next()``.
    public mutating func next<Inflater: WebSocketMessageInflating>(
        inflater: inout Inflater
    ) throws(WebSocketProtocolError) -> Event? {
        guard !failed else { return nil }
        do {
            while let event = try decoder.next() {
                switch event {
                case .header(let header):
                    try begin(header)
                case .payload(let chunk, let isFrameEnd):
                    if let result = try consume(chunk, isFrameEnd: isFrameEnd, inflater: &inflater) { return result }
                }
            }
            return nil
        } catch {
            failed = true
            throw error
        }
    }

    private mutating func begin(_ header: WebSocketFrameHeader) throws(WebSocketProtocolError) {
        if header.opcode.isControl {
            frame = .control(header.opcode, payload: [])
            return
        }
        let compressedFlag = header.reservedBits & WebSocketFrameHeader.rsv1 != 0
        var received = 0
        var compressedBytes: Int?
        switch (header.opcode, message) {
        case (.continuation, .none):
            throw WebSocketProtocolError(.protocolError, "continuation frame without a message to continue")
        case (.continuation, _) where compressedFlag:
            throw WebSocketProtocolError(.protocolError, "RSV1 set on a continuation frame")
        case (.continuation, .assembling(_, let payload, _, let compressed)):
            received = compressed ?? payload.count
            compressedBytes = compressed
        case (_, .assembling):
            throw WebSocketProtocolError(.protocolError, "new message started before the previous one ended")
        case (let opcode, .none):
            compressedBytes = compressedFlag ? 0 : nil
            message = .assembling(
                kind: opcode == .text ? .text : .binary, payload: [], utf8: UTF8Validator(),
                compressedBytes: compressedBytes)
        }
        let limit = compressedBytes == nil ? maxMessageBytes : maxCompressedBytes
        if header.payloadLength > limit - received {
            throw WebSocketProtocolError(.messageTooBig, "message exceeds \(maxMessageBytes) bytes")
        }
        frame = .data(fin: header.fin)
    }

    private mutating func consume<Inflater: WebSocketMessageInflating>(
        _ chunk: [UInt8], isFrameEnd: Bool, inflater: inout Inflater
    ) throws(WebSocketProtocolError) -> Event? {
        switch frame {
        case .none:
            return nil
        case .control(let opcode, var payload):
            payload.append(contentsOf: chunk)
            guard isFrameEnd else {
                frame = .control(opcode, payload: payload)
                return nil
            }
            frame = .none
            return try controlEvent(opcode, payload)
        case .data(let fin):
            guard case .assembling(let kind, var payload, var utf8, var compressedBytes) = message else { return nil }
            message = .none
            let start = payload.count
            if let received = compressedBytes {
                compressedBytes = received + chunk.count
                try inflater.inflate(chunk, into: &payload, limit: maxMessageBytes)
                if fin && isFrameEnd { try inflater.finishMessage(into: &payload, limit: maxMessageBytes) }
            } else {
                payload.append(contentsOf: chunk)
            }
            if kind == .text && !utf8.feed(payload[start...]) {
                throw WebSocketProtocolError(.invalidPayload, "text message is not valid UTF-8")
            }
            guard isFrameEnd else {
                message = .assembling(kind: kind, payload: payload, utf8: utf8, compressedBytes: compressedBytes)
                return nil
            }
            frame = .none
            guard fin else {
                message = .assembling(kind: kind, payload: payload, utf8: utf8, compressedBytes: compressedBytes)
                return nil
            }
            if kind == .text && !utf8.isAtBoundary {
                throw WebSocketProtocolError(.invalidPayload, "text message ends inside a UTF-8 sequence")
            }
            return .message(WebSocketMessage(kind: kind, payload: payload))
        }
    }

    private func controlEvent(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws(WebSocketProtocolError) -> Event {
        switch opcode {
        case .ping:
            return .ping(payload)
        case .pong:
            return .pong(payload)
        default:
            return try Self.parseClose(payload)
        }
    }

    /// Validates a close frame's payload: empty, or a legal code plus a UTF-8 reason.
    static func parseClose(_ payload: [UInt8]) throws(WebSocketProtocolError) -> Event {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else {
            throw WebSocketProtocolError(.protocolError, "close frame with a one-byte payload")
        }
        let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isValidOnWire else {
            throw WebSocketProtocolError(.protocolError, "invalid close code \(code.rawValue)")
        }
        let reason = payload[2...]
        guard UTF8Validator.isValid(reason) else {
            throw WebSocketProtocolError(.invalidPayload, "close reason is not valid UTF-8")
        }
        return .close(code: code, reason: String(decoding: reason, as: UTF8.self))
    }
}
