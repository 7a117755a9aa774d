/// A restart grace deadline to keep or drop (see
/// ``CallStateMachine/restore(_:graceDeadlines:now:)``); the machine asks,
/// the store commits it with the changes.
public enum RestartGraceChange: Hashable, Sendable {
    /// `uid` must be back by `deadline` (ms since the Unix epoch).
    case set(uid: String, deadline: Int64)
    /// `uid` came back, or its call ended.
    case clear(uid: String)
}
