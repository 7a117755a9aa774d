import SignalProtocol

/// What a ``WebSocketMessageReader`` made of a byte stream: the events, then
/// the error that failed it, if any.
public struct MessageReaderRun: Equatable {
    public var events: [WebSocketMessageReader.Event] = []
    public var error: WebSocketCloseCode?

    /// Feeds `chunks` to a fresh reader one after another, taking every event
    /// after each, and checks what holds for every event and for a failed reader.
    public init<Inflater: WebSocketMessageInflating>(
        _ chunks: [ArraySlice<UInt8>], role: WebSocketRole, maxMessageBytes: Int, perMessageDeflate: Bool,
        inflater: inout Inflater
    ) {
        var reader = WebSocketMessageReader(
            role: role, maxMessageBytes: maxMessageBytes,
            perMessageDeflate: perMessageDeflate)
        for chunk in chunks {
            reader.append(contentsOf: chunk)
            do {
                while let event = try reader.next(inflater: &inflater) {
                    Self.check(event, maxMessageBytes: maxMessageBytes)
                    events.append(event)
                }
            } catch {
                self.error = error.closeCode
                // A failed reader stays failed, whatever arrives after.
                reader.append(contentsOf: chunk)
                require((try? reader.next(inflater: &inflater)) == .some(nil), "a failed reader produced more")
                return
            }
        }
    }

    private static func check(_ event: WebSocketMessageReader.Event, maxMessageBytes: Int) {
        switch event {
        case .message(let message):
            require(
                message.payload.count <= maxMessageBytes,
                "a \(message.payload.count)-byte message passed the \(maxMessageBytes)-byte limit")
            if message.kind == .text {
                require(UTF8Validator.isValid(message.payload), "a text message is not UTF-8")
            }
        case .ping(let payload), .pong(let payload):
            require(payload.count <= 125, "a control frame over 125 bytes")
        case .close(let code, let reason):
            require(reason.utf8.count <= 123, "a close reason over 123 bytes")
            if let code { require(code.isValidOnWire, "close code \(code.rawValue) is not valid on the wire") }
        }
    }
}
