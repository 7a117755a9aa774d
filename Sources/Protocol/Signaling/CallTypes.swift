/// Where a call stands. `initiated` rings; `ongoing` was accepted; the
/// other five are terminal and never change again.
public enum CallStatus: String, Sendable, CaseIterable {
    /// Ringing: the caller initiated, the callee has not answered.
    case initiated
    /// Accepted: both parties are in the call.
    case ongoing
    /// An ongoing call that one side (or the server) ended.
    case ended
    /// The callee declined.
    case rejected
    /// The callee was busy (in another call, or said so).
    case busy
    /// The caller gave up while it rang (or the server did for it).
    case cancelled
    /// Nobody answered before the ring timeout.
    case unanswered

    public var isTerminal: Bool { self != .initiated && self != .ongoing }
}

/// Audio or video.
public enum CallType: String, Sendable, CaseIterable {
    /// Voice only.
    case audio
    /// Voice and video.
    case video
}

/// Why a call reached its terminal status.
public enum EndReason: String, Sendable, CaseIterable {
    /// A party ended an ongoing call.
    case hangup
    /// The callee declined.
    case rejected
    /// The callee was busy.
    case busy
    /// The caller cancelled while it rang.
    case cancelled
    /// The ring timeout passed.
    case timeout
    /// A party's devices all went away and did not come back within the grace period.
    case connectionLost = "connection_lost"
    /// The server shut down while the call was live.
    case serverShutdown = "server_shutdown"
    /// The server restarted after a crash while the call was live.
    case serverRestart = "server_restart"
    /// The callee had no connected device and no push token, or every push
    /// to it failed for good, with `calls.unreachable: fail` (status `unanswered`).
    case unreachable
}

/// A call's direction relative to the user asking.
public enum CallDirection: String, Sendable, CaseIterable {
    /// The user was the receiver.
    case incoming
    /// The user was the initiator.
    case outgoing
}
