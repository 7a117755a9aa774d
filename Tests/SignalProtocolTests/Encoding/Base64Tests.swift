import TestSupport
import Testing

@testable import SignalProtocol

@Suite("Base64", .blocking)
struct Base64Tests {
    /// RFC 4648 §10 test vectors.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    @Test("RFC 4648 vectors encode and decode", arguments: vectors)
    func rfcVectors(plain: String, encoded: String) throws {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(try #require(Base64.decode(encoded)) == Array(plain.utf8))
    }

    @Test("every byte value round-trips")
    func allBytes() throws {
        let bytes = (0 ... 255).map { UInt8($0) }
        for length in 0 ... bytes.count {
            let encoded = Base64.encode(bytes.prefix(length))
            #expect(try #require(Base64.decode(encoded)) == Array(bytes.prefix(length)))
        }
    }

    @Test(
        "non-canonical input is rejected",
        arguments: [
            "Zg", "Zg=", "Z===", "Zh==", "Zm9=", "Zm8=Zm8=", "Zm 9v", "Zm9v\n", "Zm-_", "=Zm9",
        ])
    func rejects(text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test("a WebSocket key is 16 bytes")
    func webSocketKey() {
        #expect(Base64.decode("dGhlIHNhbXBsZSBub25jZQ==")?.count == 16)
    }
}
