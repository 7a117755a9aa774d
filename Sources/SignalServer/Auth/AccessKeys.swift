import SignalCrypto

/// The keys that grant access: development auth keys for uid + authKey
/// logins and API keys for the REST API. Compared in constant time.
public struct AccessKeys: Sendable {
    /// Keys any uid may log in with (development).
    public let authKeys: [String]
    /// Keys for the REST API (`X-Api-Key`).
    public let apiKeys: [String]

    public init(authKeys: [String], apiKeys: [String]) {
        self.authKeys = authKeys
        self.apiKeys = apiKeys
    }

    public func isAuthKey(_ key: String) -> Bool { Self.contains(authKeys, key) }

    public func isAPIKey(_ key: String) -> Bool { Self.contains(apiKeys, key) }

    private static func contains(_ keys: [String], _ key: String) -> Bool {
        let candidate = Array(key.utf8)
        return keys.reduce(false) { found, known in
            Crypto.constantTimeEqual(Array(known.utf8), candidate) || found
        }
    }
}
