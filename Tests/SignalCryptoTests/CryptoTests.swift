import SignalCrypto
import Testing
import TestSupport

@Suite(.blocking) struct CryptoTests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test func sha1OfKnownInputs() {
        #expect(hex(Crypto.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(Crypto.sha1([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    /// RFC 4231, test case 2.
    @Test func hmacSHA256MatchesRFC4231() {
        let mac = Crypto.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
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
}
