import SignalProtocol

/// One input to the call state machine, as a value: what the service
/// records of each transition (the test tap, a cluster transaction) names
/// it with this. Package access: only the server records inputs.
package enum TransitionInput: Sendable {
    /// A call request of a device.
    case request(ClientRequest, id: String, device: Device)
    /// A device authenticated.
    case connect(Device, requestId: String?, resumingAfter: Int64?)
    /// A device's connection closed.
    case disconnect(Device)
    /// A ring timeout or a grace period came due.
    case timer(SignalingTimer)
    /// The push side found nothing to ring the callee of the call with.
    case unreachable(sessionId: String)
    /// The calls were rebuilt from the store after a failed commit.
    case rebuild
    /// The machine started again from the store (a simulated crash).
    case restart
    /// The server stops (`calls.onRestart: end` ends the live calls).
    case shutdown

    /// The device the input came from, if any.
    package var device: Device? {
        switch self {
        case .request(_, _, let device), .connect(let device, _, _), .disconnect(let device): device
        case .timer, .unreachable, .rebuild, .restart, .shutdown: nil
        }
    }
}
