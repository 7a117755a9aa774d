import SignalCrypto
import SignalProtocol

/// A LiveKit access token: a JWT (HS256, signed with the API secret) whose
/// grant joins one room, the call's, named by its session id. The claims
/// are LiveKit's (`iss` the API key, `sub` the participant's identity, the
/// `video` grant), so LiveKit, and its SDKs' verifiers, accept it as one of
/// their own.
enum LiveKitToken {
    /// A token for `uid` to join room `sessionId` and publish and
    /// subscribe, valid from `now` (ms) for the configured time; `name` is
    /// the participant's display name (the profile's, as the call holds it).
    static func mint(
        sessionId: String, uid: String, name: String?, now: Int64, settings: LiveKitSettings
    ) throws(CryptoError) -> MediaToken? {
        guard let url = settings.url, let apiKey = settings.apiKey, let secret = settings.apiSecret else { return nil }
        let issuedAt = now / 1000
        let expires = issuedAt + Int64(settings.tokenSeconds)
        var claims: [(key: String, value: JSONValue)] = [
            ("iss", .string(apiKey)), ("sub", .string(uid)), ("nbf", .integer(issuedAt)), ("exp", .integer(expires)),
            (
                "video",
                .object([
                    ("room", .string(sessionId)), ("roomJoin", .bool(true)), ("canPublish", .bool(true)),
                    ("canSubscribe", .bool(true)),
                ])
            ),
        ]
        if let name { claims.append(("name", .string(name))) }
        let token = try JSONWebToken.sign(claims: .object(claims), hmacSHA256: Array(secret.utf8))
        return MediaToken(url: url, token: token, expiresAt: expires * 1000)
    }
}
