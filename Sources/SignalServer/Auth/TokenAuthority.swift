import SignalCore
import SignalCrypto
import SignalProtocol
import Synchronization

/// Mints and verifies auth tokens: `v1.<payload>.<signature>`, both parts
/// base64url, the payload a JSON object `{"sub":uid,"iat":ms,"exp":ms,"jti":id}`
/// and the signature HMAC-SHA256 over `v1.<payload>` with the server's secret.
///
/// Verifying reads no database: the only lookup is the in-memory revocation
/// time of the token's user (tokens issued at or before it are revoked).
public final class TokenAuthority: Sendable {
    private let secret: [UInt8]
    private let revocations: Mutex<[String: Int64]>

    /// An authority signing with `secret`, with the revocations loaded from the store.
    public init(secret: [UInt8], revocations: [String: Int64]) {
        self.secret = secret
        self.revocations = Mutex(revocations)
    }

    /// A token for `uid` valid for `ttlSeconds` from `now` (ms since the epoch).
    /// It is issued strictly after the user's last revocation, so a token
    /// minted in the same millisecond as a revocation still works. Throws
    /// ``CryptoError/Code/digest`` when the signature cannot be made.
    public func mint(
        uid: String, ttlSeconds: Int64, now: Int64
    ) throws(CryptoError) -> (token: String, expiresAt: Int64) {
        let issuedAt = max(now, (revocations.withLock { $0[uid] } ?? now - 1) + 1)
        let expiresAt = now + ttlSeconds * 1000
        let payload = JSONValue.object([
            ("sub", .string(uid)), ("iat", .integer(issuedAt)), ("exp", .integer(expiresAt)),
            ("jti", .string(SessionID.random())),
        ])
        var bytes: [UInt8] = []
        payload.write(into: &bytes)
        let signed = "v1." + Base64.encodeURL(bytes)
        return (signed + "." + Base64.encodeURL(try sign(Array(signed.utf8))), expiresAt)
    }

    /// The uid a token was issued to, or why it is not accepted.
    public func verify(_ token: String, now: Int64) -> Result<String, SignalError> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1",
            let payloadBytes = Base64.decodeURL(String(parts[1])),
            let signature = Base64.decodeURL(String(parts[2]))
        else {
            return .failure(SignalError(.authFailed, "malformed token"))
        }
        guard let expected = try? sign(Array("v1.\(parts[1])".utf8)) else {
            return .failure(SignalError(.internalError, "the token signature cannot be checked now"))
        }
        // Both are HMAC-SHA256 outputs if the token is genuine: the length
        // that constantTimeEqual checks first is public (32 bytes).
        guard Crypto.constantTimeEqual(signature, expected) else {
            return .failure(SignalError(.authFailed, "token signature does not verify"))
        }
        guard let payload = try? JSONValue.parse(payloadBytes), let uid = payload["sub"]?.stringValue,
            let issuedAt = payload["iat"]?.integerValue, let expiresAt = payload["exp"]?.integerValue
        else {
            return .failure(SignalError(.authFailed, "malformed token payload"))
        }
        guard now < expiresAt else { return .failure(SignalError(.authFailed, "token expired")) }
        if let revokedAt = revocations.withLock({ $0[uid] }), issuedAt <= revokedAt {
            return .failure(SignalError(.authFailed, "token revoked"))
        }
        return .success(uid)
    }

    /// Revokes every token of `uid` issued at or before `at`.
    public func revoke(uid: String, at: Int64) {
        revocations.withLock { $0[uid] = max($0[uid] ?? 0, at) }
    }

    /// Forgets every revocation (the test API's reset, after the store's were deleted).
    func forgetRevocations() { revocations.withLock { $0 = [:] } }

    private func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try Crypto.hmacSHA256(key: secret, message: message)
    }
}
