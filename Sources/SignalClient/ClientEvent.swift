import SignalProtocol

/// Something the server pushed, or a change of the connection.
public enum ClientEvent: Sendable, Equatable {
    /// A `{"type":"call"}` event; every one arrives, in order.
    case call(Call)
    /// The other party's device in an ongoing call relayed this (`signal`);
    /// every one arrives, in order, while the connection lasts (signals are
    /// not stored: one sent while this device was reconnecting is lost).
    case signal(PeerSignal)
    /// The connection was lost; reconnecting is on and being tried.
    case reconnecting(ClientError)
    /// Authenticated again, as the same device, within the reconnect window;
    /// `activeCall` is the user's live call from the new auth result, and
    /// `endpoint` the one of ``SignalClient/endpoints`` that took the device.
    case reconnected(activeCall: Call?, endpoint: ServerEndpoint)
    /// Final, no events follow: closed by ``SignalClient/close()``, by the
    /// server (the error carries its close code), or lost for good.
    case disconnected(ClientError)
}
