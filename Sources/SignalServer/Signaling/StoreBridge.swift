import SignalProtocol

extension CallLogPage {
    /// The wire form of a `getCallLogs` result: `{"logs":[…],"next":cursor or null}`.
    var json: JSONValue {
        .object([("logs", .array(logs.map(\.json))), ("next", next.map(JSONValue.string) ?? .null)])
    }
}

extension StoreError {
    /// The protocol error for a failed store operation: a bad cursor is the
    /// client's mistake, anything else the server's.
    var signalError: SignalError {
        switch code {
        case .badCursor: return SignalError(.validation, "cursor is not valid")
        case .badQuery: return SignalError(.validation, message)
        default: return SignalError(.internalError, "the store failed")
        }
    }
}
