import COpenSSL
import SignalProtocol

/// The few cryptographic functions ringd needs, from OpenSSL's libcrypto.
public enum Crypto {
    /// SHA-1 of `bytes` (20 bytes).
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha1(), nil)
        }
        precondition(ok == 1, "OpenSSL SHA-1 failed")
        return Array(digest.prefix(Int(length)))
    }

    /// SHA-256 of `bytes` (32 bytes). Throws ``CryptoError/Code/digest`` when
    /// OpenSSL fails, which it does only when it cannot allocate.
    public static func sha256(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
        }
        guard ok == 1, length == 32 else { throw CryptoError.fromQueue(.digest, "SHA-256 failed") }
        return Array(digest.prefix(32))
    }

    /// HMAC-SHA256 of `message` under `key` (32 bytes). Throws
    /// ``CryptoError/Code/digest`` when OpenSSL fails (it returns NULL only
    /// when it cannot allocate): an unchecked failure would leave a zeroed or
    /// empty digest, i.e. a wrong signature, with no sign of it.
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try hmac(EVP_sha256(), length: 32, "HMAC-SHA256", key: key, message: message)
    }

    /// HMAC-SHA1 of `message` under `key` (20 bytes): what TURN servers check
    /// time-limited credentials with (coturn's `use-auth-secret`). Throws as
    /// ``hmacSHA256(key:message:)``.
    public static func hmacSHA1(key: [UInt8], message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try hmac(EVP_sha1(), length: 20, "HMAC-SHA1", key: key, message: message)
    }

    private static func hmac(
        _ digestType: OpaquePointer?, length expected: Int, _ name: String, key: [UInt8],
        message: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        // HMAC() takes the key length as an int; no key of ours comes near.
        guard key.count <= Int(Int32.max) else { throw CryptoError(code: .digest, message: "the HMAC key is too long") }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { data in
                HMAC(
                    digestType, keyBytes.baseAddress, Int32(keyBytes.count),
                    data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count, &digest, &length)
            }
        }
        guard result != nil, Int(length) == expected else { throw CryptoError.fromQueue(.digest, "\(name) failed") }
        return Array(digest.prefix(expected))
    }

    /// Compares without an early exit over the bytes, so timing does not
    /// reveal how much matched. A length mismatch does return at once, so use
    /// it only where the length is public (a MAC, a digest); compare secrets
    /// of any length through ``SecretDigest``.
    public static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }

    /// The `Sec-WebSocket-Accept` value for a `Sec-WebSocket-Key`:
    /// base64(SHA-1(key + the RFC 6455 GUID)).
    public static func webSocketAccept(forKey key: String) -> String {
        Base64.encode(sha1(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
    }
}

/// A secret kept as its SHA-256, to check candidates against it without
/// revealing the secret's length: comparing the raw bytes stops at a length
/// mismatch, so an attacker timing wrong guesses of each length learns it.
/// Both sides are 32 bytes here, and the secret's own digest is made once,
/// so the time of a check depends only on the candidate.
public struct SecretDigest: Sendable {
    private let digest: [UInt8]

    /// Throws ``CryptoError/Code/digest`` when SHA-256 fails (allocation).
    public init(_ secret: [UInt8]) throws(CryptoError) {
        digest = try Crypto.sha256(secret)
    }

    /// Whether both digests are of the same bytes, in constant time (not
    /// `Equatable`, whose synthesized `==` would stop at the first difference).
    public func matches(_ other: SecretDigest) -> Bool {
        Crypto.constantTimeEqual(digest, other.digest)
    }
}
