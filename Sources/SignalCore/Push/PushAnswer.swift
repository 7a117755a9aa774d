/// What a push service's answer means for the push and the token.
package enum PushAnswer: Equatable, Sendable {
    /// Taken.
    case sent
    /// The token is dead (uninstalled app, token for another app): remove it.
    case purge(String)
    /// Our credentials were refused (an expired or invalid provider token,
    /// an expired access token): renew them and try once more.
    case renewCredentials(String)
    /// Overloaded, down, or no answer: try again later, not sooner than
    /// `after` seconds when the service said so (`Retry-After`).
    case retry(String, after: Double? = nil)
    /// Refused for good (a bad request): this push is not sent.
    case failed(String)
}
