/// One page of a user's call history, newest first.
public struct CallLogPage: Hashable, Sendable {
    /// The entries, newest first.
    public var logs: [CallLog]
    /// The cursor of the following (older) page; nil when this page is the last.
    public var next: String?

    public init(logs: [CallLog], next: String?) {
        self.logs = logs
        self.next = next
    }
}
