import SignalCrypto
import TestSupport
import Testing

@Suite(.blocking) struct CryptoTests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test func sha1OfKnownInputs() {
        #expect(hex(Crypto.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(Crypto.sha1([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    /// RFC 4231, test case 2.
    @Test func hmacSHA256MatchesRFC4231() throws {
        let mac = try Crypto.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// An empty key and message still give a 32-byte MAC (a checked HMAC()
    /// call, not a zeroed buffer): the value from `openssl mac -digest SHA256 HMAC`.
    @Test func hmacSHA256OfEmptyKeyAndMessage() throws {
        #expect(
            hex(try Crypto.hmacSHA256(key: [], message: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    /// FIPS 180-2, appendix B.1.
    @Test func sha256OfKnownInputs() throws {
        #expect(
            hex(try Crypto.sha256(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// RFC 6455, section 1.3.
    @Test func webSocketAcceptOfTheRFCExample() {
        #expect(Crypto.webSocketAccept(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func constantTimeEquality() {
        #expect(Crypto.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!Crypto.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!Crypto.constantTimeEqual([1, 2], [1, 2, 3]))
    }

    /// Secrets are compared as 32-byte digests whatever their lengths: a
    /// prefix, an extension and the empty string all fail, the secret passes.
    @Test func secretDigestsMatchOnlyTheSameBytes() throws {
        let secret = try SecretDigest(Array("ringd-dev-api-key".utf8))
        #expect(secret.matches(try SecretDigest(Array("ringd-dev-api-key".utf8))))
        for other in [
            "ringd-dev-api-ke", "ringd-dev-api-key\0", "", "ringd-dev-api-kez", String(repeating: "k", count: 4096),
        ] {
            #expect(!secret.matches(try SecretDigest(Array(other.utf8))), "\(other.prefix(20))")
        }
        #expect(try SecretDigest([]).matches(try SecretDigest([])))
    }
}
