import SignalProtocol

/// What a webhook event reports: one trigger for each change of a call,
/// named like CometChat's ringing events so that handlers written for those
/// keep working (docs/WEBHOOKS.md).
public enum WebhookTrigger: String, Sendable, CaseIterable {
    /// A call was placed and rings.
    case callInitiated = "call_initiated"
    /// The callee accepted: the call is ongoing.
    case callStarted = "call_started"
    /// An ongoing call ended (hang-up, lost connection, server stop or restart).
    case callEnded = "call_ended"
    /// The callee declined.
    case callRejected = "call_rejected"
    /// The callee was busy: in another call when it was placed, or said so.
    case callBusy = "call_busy"
    /// The ringing call was given up (by the caller, its lost connection, a
    /// server stop or restart).
    case callCancelled = "call_cancelled"
    /// Nobody answered before the ring timeout.
    case callUnanswered = "call_unanswered"

    /// The trigger of `change`, decided by the status the call reached and
    /// by whether the change created it (docs/WEBHOOKS.md has the table).
    /// Nil for a change that reports nothing (a ringing acknowledgement,
    /// which leaves the status as it was) or that the state machine never
    /// makes: creating a call in another status than `initiated`, `busy` or
    /// `unanswered`, changing a terminal call, or going back to ringing.
    public init?(change: CallChange) {
        guard let before = change.before else {
            switch change.after.status {
            case .initiated: self = .callInitiated
            case .busy: self = .callBusy
            // Placed with nothing to ring it (`calls.unreachable: fail`).
            case .unanswered: self = .callUnanswered
            default: return nil
            }
            return
        }
        guard !before.status.isTerminal, before.status != change.after.status else { return nil }
        switch change.after.status {
        case .initiated: return nil
        case .ongoing: self = .callStarted
        case .ended: self = .callEnded
        case .rejected: self = .callRejected
        case .busy: self = .callBusy
        case .cancelled: self = .callCancelled
        case .unanswered: self = .callUnanswered
        }
    }
}
