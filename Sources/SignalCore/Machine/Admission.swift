import SignalProtocol

/// The errors an input gets when the server does not run it, written once
/// for one node and a cluster alike.
public enum Refusal {
    public static let shuttingDown = SignalError(.unavailable, "the server is shutting down")
    /// A request while a failed commit's calls are being read back.
    public static let recovering = SignalError(
        .unavailable, "the server is recovering from a store failure; try again")
    /// The requester's change was not committed.
    public static let storeFailed = SignalError(.internalError, "the store failed; try again")
    /// A cluster node could not run the transition in its database.
    public static let clusterUnavailable = SignalError(
        .unavailable, "the cluster's database did not take the change; try again")
}

/// How an input to the machine is treated while the service stops, or
/// holds its inputs (a recovery, or the test API replacing the machine).
public enum InputKind: Sendable {
    /// A call request: refused while stopping or holding.
    case request(DeviceAddress, id: String?)
    /// A device arriving (refused while stopping, at `refusing`) or
    /// leaving (never refused); held while holding.
    case presence(refusing: (address: DeviceAddress, id: String?)?)
    /// A machine timer: dropped while stopping, held while holding.
    case timer

    /// What to do with the input. `held` is why inputs are held (nil when
    /// they run): a request is refused with it, anything else waits.
    public func admission(stopping: Bool, held: SignalError?) -> Admission {
        switch self {
        case .request(let address, let id) where stopping:
            .refuse(address, id: id, Refusal.shuttingDown)
        case .request(let address, let id):
            held.map { .refuse(address, id: id, $0) } ?? .run
        case .presence(let refusing?) where stopping:
            .refuse(refusing.address, id: refusing.id, Refusal.shuttingDown)
        case .timer where stopping:
            .drop
        case .presence, .timer:
            held == nil ? .run : .hold
        }
    }
}

/// The outcome of ``InputKind/admission(stopping:held:)``.
public enum Admission: Sendable {
    case run
    /// Keep the input and run it, in order, once inputs run again.
    case hold
    case drop
    /// Answer the device's request with `error` instead.
    case refuse(DeviceAddress, id: String?, SignalError)
}
