import SignalCrypto

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
    private let authDigests: [SecretDigest]
    private let apiDigests: [SecretDigest]

    /// Throws ``CryptoError/Code/digest`` when a key cannot be hashed (allocation).
    public init(authKeys: [String], apiKeys: [String]) throws(CryptoError) {
        self.authKeys = authKeys
        self.apiKeys = apiKeys
        authDigests = try Self.digests(authKeys)
        apiDigests = try Self.digests(apiKeys)
    }

    public func isAuthKey(_ key: String) -> Bool { Self.contains(authDigests, key) }

    public func isAPIKey(_ key: String) -> Bool { Self.contains(apiDigests, key) }

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
