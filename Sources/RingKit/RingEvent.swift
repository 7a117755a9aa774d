import SignalProtocol

/// Where a ``RingClient``'s connection stands.
public enum RingConnectionState: Sendable, Hashable {
    /// No connection, and none being made.
    case disconnected
    /// ``RingClient/connect()`` is opening the WebSocket.
    case connecting
    /// The WebSocket is open; `loggedIn` once `auth` succeeded on it.
    case connected(loggedIn: Bool)
    /// The connection was lost after login; the client opens a new one
    /// with backoff and resumes where it left off.
    case reconnecting
}

/// What ``RingClient/events`` delivers, in order.
public enum RingEvent: Sendable, Hashable {
    /// A call of the user changed (a `call` event, or one the device
    /// missed while away, delivered on resuming before `.connected`).
    case call(Call)
    /// The other party's device relayed this in an ongoing call (not
    /// stored: one sent while this device was away is lost).
    case signal(PeerSignal)
    /// The connection changed state.
    case connection(RingConnectionState)
}
