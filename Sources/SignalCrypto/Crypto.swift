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

    /// HMAC-SHA256 of `message` under `key` (32 bytes).
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { data in
                _ = HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count),
                         data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count, &digest, &length)
            }
        }
        return Array(digest.prefix(Int(length)))
    }

    /// Compares without an early exit, so timing does not reveal how much matched.
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
