/// `testing.*`: the test control API (`/v1/test/…`), for a ringd that is the
/// backend of integration tests. Off unless `enabled` is true and a `key` is set.
public struct TestingSettings: Sendable, Equatable {
    /// Whether the routes exist at all (they answer 404 otherwise).
    public var enabled = false
    /// The secret every request of the API must carry in `X-Test-Key`.
    public var key: String?
    /// Whether peers other than this machine's loopback may use it
    /// (`testing.allowRemote`); without it they get 404, as for a path
    /// that does not exist.
    public var allowRemote = false

    public init() {}
}
