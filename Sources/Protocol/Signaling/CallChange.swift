/// One change of a call: the unit the server commits, tells both parties'
/// devices about, and hands to whatever else follows calls (webhooks, push,
/// a test tap).
public struct CallChange: Hashable, Sendable {
    /// The call before the change; nil when the change created it.
    public var before: Call?
    public var after: Call
    /// What changed it; nil when the change created the call.
    public var transition: CallTransition?
    public var actor: CallActor

    public init(before: Call?, after: Call, transition: CallTransition?, actor: CallActor) {
        self.before = before
        self.after = after
        self.transition = transition
        self.actor = actor
    }

    /// A change creating `call` (ringing, or busy at once).
    public static func created(_ call: Call, by actor: CallActor) -> CallChange {
        CallChange(before: nil, after: call, transition: nil, actor: actor)
    }

    public var sessionId: String { after.sessionId }
}
