import SignalCrypto
import SignalProtocol

/// The keys that grant access: development auth keys for uid + authKey
/// logins and API keys for the REST API.
///
/// Checked through their SHA-256 (``SecretDigest``), made once here: a
/// comparison of the raw keys would stop at a length mismatch and so tell a
/// client timing its guesses how long each key is.
public struct AccessKeys: Sendable {
    /// Keys any uid may log in with (development).
    public let authKeys: [String]
    /// Keys for the REST API (`X-Api-Key`).
    public let apiKeys: [String]
    /// `auth.allowDevelopmentKeys`: the shipped keys are accepted whatever
    /// the request's path.
    public let developmentKeysAllowed: Bool
    private let authDigests: [SecretDigest]
    private let apiDigests: [SecretDigest]
    /// `metrics.key`'s: it reads `GET /metrics` and nothing else.
    private let metricsDigest: SecretDigest?

    /// Throws ``CryptoError/Code/digest`` when a key cannot be hashed (allocation).
    public init(
        authKeys: [String], apiKeys: [String], metricsKey: String? = nil, developmentKeysAllowed: Bool = false
    ) throws(CryptoError) {
        self.authKeys = authKeys
        self.apiKeys = apiKeys
        self.developmentKeysAllowed = developmentKeysAllowed
        authDigests = try Self.digests(authKeys)
        apiDigests = try Self.digests(apiKeys)
        metricsDigest = try metricsKey.map { key throws(CryptoError) in try SecretDigest(Array(key.utf8)) }
    }

    public func isAuthKey(_ key: String) -> Bool { Self.contains(authDigests, key) }

    public func isAPIKey(_ key: String) -> Bool { Self.contains(apiDigests, key) }

    public func isMetricsKey(_ key: String) -> Bool { metricsDigest.map { Self.contains([$0], key) } ?? false }

    /// Why `key`, accepted otherwise, is refused on a request a proxy says it
    /// forwarded (``HTTPRequest/cameThroughProxy``); nil when it is not. The
    /// shipped development keys are public (README, config.json): a
    /// loopback listener keeps them safe only while nothing forwards to it
    /// from elsewhere, as a reverse proxy on the same host does.
    public func refusal(of key: String, throughProxy: Bool) -> String? {
        guard throughProxy, !developmentKeysAllowed else { return nil }
        let setting: String
        switch key {
        case ServerConfig.developmentAuthKey: setting = "auth.authKeys"
        case ServerConfig.developmentAPIKey: setting = "auth.apiKeys"
        default: return nil
        }
        return "the development key \"\(key)\" is refused on a request that came through a proxy (it carries "
            + "Forwarded, X-Forwarded-For or X-Real-IP): set \(setting) to your own secret (e.g. `openssl rand -hex "
            + "32`), or auth.allowDevelopmentKeys: true for a trusted network"
    }

    private static func digests(_ keys: [String]) throws(CryptoError) -> [SecretDigest] {
        var digests: [SecretDigest] = []
        for key in keys { digests.append(try SecretDigest(Array(key.utf8))) }
        return digests
    }

    /// Compares with every key, without stopping at a match, so the time does
    /// not say which one matched. A candidate that cannot be hashed matches none.
    private static func contains(_ digests: [SecretDigest], _ key: String) -> Bool {
        guard let candidate = try? SecretDigest(Array(key.utf8)) else { return false }
        return digests.reduce(false) { found, known in known.matches(candidate) || found }
    }
}
