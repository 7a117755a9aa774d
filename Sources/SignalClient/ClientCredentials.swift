/// How a device proves who it is in the `auth` frame.
public enum ClientCredentials: Sendable, Hashable {
    /// A uid and one of the server's development auth keys (`auth.authKeys`).
    case authKey(uid: String, key: String)
    /// A token minted through the REST API (``RestClient/mintToken(uid:ttlSeconds:)``).
    case token(String)
}
