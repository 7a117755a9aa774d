import SignalProtocol

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
