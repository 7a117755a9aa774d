/// What happens to a call nothing can ring (`calls.unreachable`): the callee
/// has no connected device and no push token, or every push to it failed
/// for good. In the core because the machine decides it.
public enum UnreachablePolicy: String, Sendable, CaseIterable {
    /// It rings until its deadline anyway: a device that connects late
    /// still rings.
    case ring
    /// It ends at once, `unanswered` with `endReason` `unreachable`.
    case fail
}
