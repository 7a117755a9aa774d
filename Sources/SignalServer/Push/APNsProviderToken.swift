import SignalCore
import SignalCrypto
import SignalProtocol

/// The APNs provider token: an ES256 JWT (`kid` the key id; `iss` the team
/// id, `iat`) signed with the account's `.p8` key. APNs refuses one older
/// than an hour and one renewed more often than every 20 minutes, so the
/// same token serves every push for 50 minutes, then a new one is signed.
/// The one exception is a token APNs refused (`ExpiredProviderToken`,
/// `InvalidProviderToken`): that one is replaced at once, once, however
/// many pushes carried it. Used on the push worker's queue only.
final class APNsProviderToken {
    private let key: SigningKey
    private let keyId: String
    private let teamId: String
    private var current: (jwt: String, issuedAt: Int64)?
    /// How long one token is used, in seconds.
    static let lifetime: Int64 = 50 * 60

    /// Reads the `.p8` key; throws naming the file when it is unusable.
    init(settings: APNsSettings) throws(PushError) {
        guard let keyFile = settings.keyFile, let keyId = settings.keyId, let teamId = settings.teamId else {
            throw PushError(.configuration, "push.apns needs keyFile, keyId and teamId")
        }
        if let refusal = SecretFileMode.refusal("push.apns.keyFile", keyFile, holding: "the APNs signing key") {
            throw PushError(.configuration, refusal)
        }
        do throws(CryptoError) {
            key = try SigningKey(contentsOfFile: keyFile)
        } catch {
            throw PushError(.configuration, "push.apns.keyFile \(keyFile): \(error)")
        }
        guard key.algorithm == .es256 else {
            throw PushError(.configuration, "push.apns.keyFile \(keyFile) is not a P-256 key (APNs keys are ES256)")
        }
        self.keyId = keyId
        self.teamId = teamId
    }

    /// The token to send at `now` (Unix seconds).
    func jwt(now: Int64) throws(PushError) -> String {
        // A renewal may date a token a second ahead, and clocks step back:
        // a token from a little in the future is still the one to use.
        if let current, now - current.issuedAt > -60, now - current.issuedAt < Self.lifetime { return current.jwt }
        return try issue(at: now)
    }

    /// APNs refused `refused`: a new token, unless one replaced it already.
    func renew(refused: String?, now: Int64) throws(PushError) -> String {
        if let current, current.jwt != refused, now - current.issuedAt < Self.lifetime { return current.jwt }
        // A new `iat`, so the new token differs even within the same second.
        return try issue(at: max(now, (current?.issuedAt ?? 0) + 1))
    }

    private func issue(at issuedAt: Int64) throws(PushError) -> String {
        let claims: JSONValue = .object([("iss", .string(teamId)), ("iat", .integer(issuedAt))])
        do throws(CryptoError) {
            let jwt = try JSONWebToken.sign(claims: claims, keyId: keyId, key: key)
            current = (jwt, issuedAt)
            return jwt
        } catch {
            throw PushError(.credentials, "signing the APNs provider token: \(error)")
        }
    }
}
