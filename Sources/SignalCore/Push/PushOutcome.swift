/// What became of one push to a device: ``PushMachine`` decides it, the
/// server counts and reports it (`GET /v1/users/{uid}/push-tokens`).
public enum PushOutcome: String, Sendable, CaseIterable {
    /// The push service took it.
    case sent
    /// The service said the token is dead; it was removed.
    case purged
    /// It failed for now and is tried again.
    case retried
    /// It was not sent and will not be: the call stopped ringing first, the
    /// retries ran out, or the service refused it for good.
    case gaveUp = "gave_up"
}
