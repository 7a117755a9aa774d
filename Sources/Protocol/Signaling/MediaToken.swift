/// The answer to `getMediaToken`: where the call's media room is and the
/// token that joins it (a LiveKit access token for the room named by the
/// session id).
public struct MediaToken: Hashable, Sendable {
    /// The media server's URL (`media.livekit.url`), e.g. `wss://media.example`.
    public var url: String
    /// The access token, a JWT.
    public var token: String
    /// When the token stops admitting (ms since the epoch); a participant
    /// already in the room stays.
    public var expiresAt: Int64

    public init(url: String, token: String, expiresAt: Int64) {
        self.url = url
        self.token = token
        self.expiresAt = expiresAt
    }

    public var json: JSONValue {
        .object([("url", .string(url)), ("token", .string(token)), ("expiresAt", .integer(expiresAt))])
    }

    public init(json: JSONValue) throws(SignalError) {
        let fields = JSONFields(json)
        self.init(
            url: try fields.string("url"), token: try fields.string("token"),
            expiresAt: try fields.integer("expiresAt"))
    }
}
