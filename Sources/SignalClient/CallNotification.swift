import SignalProtocol

/// CometChat's listener vocabulary for a call event, seen from one device of one user
/// (the mapping table in docs/PROTOCOL.md).
public enum CallNotification: Sendable, Equatable {
    /// `onIncomingCallReceived`: the call rings and the user is its receiver.
    case incomingCallReceived(Call)
    /// `onOutgoingCallAccepted`: the user's call was accepted.
    case outgoingCallAccepted(Call)
    /// `onOutgoingCallRejected`: the user's call ended rejected, busy or unanswered.
    case outgoingCallRejected(Call)
    /// `onIncomingCallCancelled`: a call to the user stopped ringing on this device:
    /// cancelled, unanswered, answered or declined on another device, or
    /// missed because the user was busy.
    case incomingCallCancelled(Call)
    /// `onCallEndedMessageReceived`: an ongoing call ended (either role).
    case callEnded(Call)

    /// The notification `call` means for device `deviceId` of user `uid`; nil
    /// for events CometChat has no listener for (e.g. the caller's other device
    /// seeing its own outgoing call ring or being cancelled).
    public init?(call: Call, uid: String, deviceId: String) {
        let isInitiator = call.initiator == uid
        let isReceiver = call.receiver == uid
        guard isInitiator || isReceiver else { return nil }
        switch call.status {
        case .initiated:
            guard isReceiver else { return nil }
            self = .incomingCallReceived(call)
        case .ongoing:
            if isInitiator {
                self = .outgoingCallAccepted(call)
            } else if call.acceptedBy != deviceId {
                self = .incomingCallCancelled(call)
            } else {
                return nil
            }
        case .rejected, .busy:
            // The callee's other devices stop ringing when one declines; a
            // call that ended busy at once is a missed call for the callee.
            self = isInitiator ? .outgoingCallRejected(call) : .incomingCallCancelled(call)
        case .unanswered:
            self = isInitiator ? .outgoingCallRejected(call) : .incomingCallCancelled(call)
        case .cancelled:
            guard isReceiver else { return nil }
            self = .incomingCallCancelled(call)
        case .ended:
            self = .callEnded(call)
        }
    }

    public var call: Call {
        switch self {
        case .incomingCallReceived(let call), .outgoingCallAccepted(let call), .outgoingCallRejected(let call),
            .incomingCallCancelled(let call), .callEnded(let call):
            return call
        }
    }
}
