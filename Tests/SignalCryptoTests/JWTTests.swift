import Foundation
import SignalCrypto
import SignalProtocol
import TestSupport
import Testing

/// ES256 and RS256 signatures and JWTs, which keys are accepted, and a check
/// of both signature directions against the `openssl` command.
@Suite(.blocking) struct JWTTests {
    private let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJURUFNMTIzNDU2In0".utf8)

    @Test func es256SignatureIsRawRAndSAndVerifies() throws {
        let key = try SigningKey(pem: Fixture.p256PKCS8)
        #expect(key.algorithm == .es256)
        let signature = try key.sign(message)
        #expect(signature.count == 64)
        #expect(key.verify(signature, of: message))
        // ECDSA signs with a fresh nonce each time; both signatures verify.
        let second = try key.sign(message)
        #expect(second != signature)
        #expect(key.verify(second, of: message))
    }

    @Test func es256TamperedMessageOrSignatureFails() throws {
        let key = try SigningKey(pem: Fixture.p256PKCS8)
        let signature = try key.sign(message)
        var otherMessage = message
        otherMessage[3] ^= 1
        #expect(!key.verify(signature, of: otherMessage))
        for index in [0, 31, 32, 63] {
            var tampered = signature
            tampered[index] ^= 0x40
            #expect(!key.verify(tampered, of: message), "byte \(index)")
        }
        #expect(!key.verify(Array(signature.prefix(63)), of: message))
        #expect(!key.verify(signature + [0], of: message))
        #expect(!key.verify([], of: message))
        #expect(!key.verify([UInt8](repeating: 0, count: 64), of: message))
        // The DER form OpenSSL itself produces is not a JWS signature.
        #expect(!key.verify(Self.der(fromRaw: signature), of: message))
        // Nor is another key's signature.
        let other = try SigningKey(pem: try SigningKey.generate(.es256))
        #expect(!other.verify(signature, of: message))
    }

    @Test func rs256SignsAndVerifies() throws {
        let key = try SigningKey(pem: Fixture.rsa2048Traditional)
        #expect(key.algorithm == .rs256)
        let signature = try key.sign(message)
        #expect(signature.count == 256)
        #expect(key.verify(signature, of: message))
        // PKCS #1 v1.5 is deterministic.
        #expect(try key.sign(message) == signature)
        var tampered = signature
        tampered[100] ^= 1
        #expect(!key.verify(tampered, of: message))
        #expect(!key.verify(signature, of: message + [0x2E]))
        #expect(!key.verify(Array(signature.dropLast()), of: message))
        #expect(!key.verify([], of: message))
    }

    @Test func generatedKeysAreTheRightKindAndPKCS8() throws {
        for algorithm in [JWTAlgorithm.es256, .rs256] {
            let pem = try SigningKey.generate(algorithm)
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            let key = try SigningKey(pem: pem)
            #expect(key.algorithm == algorithm)
            #expect(key.publicKeyPEM.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
            #expect(key.verify(try key.sign(message), of: message))
        }
    }

    /// The PKCS #8 form `openssl genpkey -algorithm EC -pkeyopt
    /// ec_paramgen_curve:P-256` writes (and Apple's .p8 files use), and the
    /// traditional EC form of the same key.
    @Test func pkcs8AndTraditionalECKeysFromTheCommand() throws {
        let pkcs8 = try SigningKey(pem: Fixture.p256PKCS8)
        let traditional = try SigningKey(pem: Fixture.p256Traditional)
        #expect(pkcs8.publicKeyPEM == Fixture.p256PublicKey)
        #expect(traditional.publicKeyPEM == Fixture.p256PublicKey)
        #expect(traditional.verify(try pkcs8.sign(message), of: message))
        // The development certificate's key is a P-256 PKCS #8 key too.
        let certificate = try SelfSignedCertificate.generate()
        #expect(try SigningKey(pem: certificate.privateKeyPEM).algorithm == .es256)
    }

    /// As a .p8 file may come: without a final newline, with CRLF line ends.
    @Test func pemWithoutFinalNewlineOrWithCRLF() throws {
        for pem in [
            String(Fixture.p256PKCS8.dropLast()), Fixture.p256PKCS8.split(separator: "\n").joined(separator: "\r\n"),
        ] {
            #expect(try SigningKey(pem: pem).publicKeyPEM == Fixture.p256PublicKey)
        }
    }

    @Test func keyFromAFile() throws {
        let directory = try TemporaryDirectory(prefix: "ringd-jwt")
        defer { directory.remove() }
        try Fixture.p256PKCS8.write(toFile: directory.file("AuthKey_ABC123DEFG.p8"), atomically: true, encoding: .utf8)
        let key = try SigningKey(contentsOfFile: directory.file("AuthKey_ABC123DEFG.p8"))
        #expect(key.publicKeyPEM == Fixture.p256PublicKey)
        let missing = #expect(throws: CryptoError.self) { try SigningKey(contentsOfFile: directory.file("missing.p8")) }
        #expect(missing?.code == .key)
        #expect(missing?.message.contains("missing.p8") == true)
    }

    @Test(arguments: [
        ("garbage", "not a key at all\n", "no \"-----BEGIN"),
        ("empty", "", "empty"),
        ("truncated", String(Fixture.p256PKCS8.prefix(120)), "cannot read the PRIVATE KEY PEM"),
        ("encrypted", Fixture.p256Encrypted, "encrypted"),
        ("P-384", Fixture.p384PKCS8, "secp384r1"),
        ("RSA 1024", Fixture.rsa1024PKCS8, "1024 bits"),
        ("Ed25519", Fixture.ed25519PKCS8, "ED25519"),
    ])
    func refusedKeys(_ refused: (name: String, pem: String, reason: String)) {
        let (name, pem, reason) = refused
        let error = #expect(throws: CryptoError.self, "\(name)") { try SigningKey(pem: pem) }
        #expect(error?.code == .key, "\(name)")
        #expect(error?.message.contains(reason) == true, "\(name): \(error?.description ?? "")")
    }

    @Test func certificatesAndPublicKeysAreNoPrivateKeys() throws {
        let certificate = try SelfSignedCertificate.generate()
        let publicKey = try SigningKey(pem: Fixture.p256PKCS8).publicKeyPEM
        for (pem, label) in [(certificate.certificatePEM, "CERTIFICATE"), (publicKey, "PUBLIC KEY")] {
            let error = #expect(throws: CryptoError.self) { try SigningKey(pem: pem) }
            #expect(error?.code == .key)
            #expect(error?.message == "the PEM holds a \(label), not a private key")
        }
    }

    @Test func jwtPartsDecode() throws {
        let key = try SigningKey(pem: Fixture.p256PKCS8)
        let claims = JSONValue.object([("iss", .string("TEAM123456")), ("iat", .integer(1_700_000_000))])
        let token = try JSONWebToken.sign(claims: claims, keyId: "ABC123DEFG", key: key)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(token.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) })
        #expect(token.hasPrefix(Base64.encodeURL(Array(#"{"alg":"ES256","typ":"JWT","kid":"ABC123DEFG"}"#.utf8)) + "."))
        let decoded = try #require(JSONWebToken.decode(token))
        #expect(decoded.header["alg"] == .string("ES256"))
        #expect(decoded.header["kid"] == .string("ABC123DEFG"))
        #expect(decoded.header["typ"] == .string("JWT"))
        #expect(decoded.claims == claims)
        #expect(decoded.signature.count == 64)
        #expect(decoded.signingInput == Array(parts.prefix(2).joined(separator: ".").utf8))
        #expect(key.verify(decoded.signature, of: decoded.signingInput))
    }

    @Test func rs256JWTWithoutKeyId() throws {
        let key = try SigningKey(pem: Fixture.rsa2048Traditional)
        let claims = JSONValue.object([
            ("iss", .string("push@example.iam.gserviceaccount.com")),
            ("scope", .string("https://www.googleapis.com/auth/firebase.messaging")),
        ])
        let token = try JSONWebToken.sign(claims: claims, keyId: nil, key: key)
        let decoded = try #require(JSONWebToken.decode(token))
        #expect(decoded.header == .object([("alg", .string("RS256")), ("typ", .string("JWT"))]))
        #expect(decoded.claims == claims)
        #expect(key.verify(decoded.signature, of: decoded.signingInput))
    }

    @Test func claimsMustBeAnObject() throws {
        let key = try SigningKey(pem: Fixture.p256PKCS8)
        let error = #expect(throws: CryptoError.self) {
            try JSONWebToken.sign(claims: .array([.integer(1)]), keyId: nil, key: key)
        }
        #expect(error?.code == .sign)
    }

    @Test func malformedTokensDoNotDecode() throws {
        let token = try JSONWebToken.sign(claims: .object([]), keyId: "K", key: try SigningKey(pem: Fixture.p256PKCS8))
        let parts = token.split(separator: ".").map(String.init)
        let notObject = Base64.encodeURL(Array("[1]".utf8))
        for bad in [
            "", "..", parts[0] + "." + parts[1], token + ".x", parts[0] + "=." + parts[1] + "." + parts[2],
            notObject + "." + parts[1] + "." + parts[2], parts[0] + "." + notObject + "." + parts[2],
            parts[0] + ".e30." + parts[2] + "*",
        ] {
            #expect(JSONWebToken.decode(bad) == nil, "\(bad)")
        }
    }

    /// One key shared by concurrent signers, as a push sender shares its key.
    @Test func oneKeySignsConcurrently() async throws {
        let key = try SigningKey(pem: Fixture.p256PKCS8)
        let message = message
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0 ..< 8 {
                group.addTask {
                    let input = message + [UInt8(index)]
                    return (0 ..< 25).allSatisfy { _ in
                        (try? key.sign(input)).map { key.verify($0, of: input) } ?? false
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }

    // MARK: - The openssl command as an independent implementation

    /// An ES256 JWT checked by `openssl dgst -verify`, its r‖s turned into DER
    /// by this test rather than by SignalCrypto; and a DER signature made by
    /// `openssl dgst -sign`, turned into r‖s here, accepted by ``SigningKey/verify(_:of:)``.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: Self.openssl)))
    func es256AgainstTheOpenSSLCommand() throws {
        let directory = try TemporaryDirectory(prefix: "ringd-jwt")
        defer { directory.remove() }
        let key = try SigningKey(pem: Fixture.p256PKCS8)
        let token = try JSONWebToken.sign(
            claims: .object([("iss", .string("TEAM123456"))]), keyId: "ABC123DEFG", key: key)
        let decoded = try #require(JSONWebToken.decode(token))
        try write(key.publicKeyPEM, directory.file("pub.pem"))
        try write(Fixture.p256PKCS8, directory.file("key.pem"))
        try Data(decoded.signingInput).write(to: URL(fileURLWithPath: directory.file("input")))
        try Data(Self.der(fromRaw: decoded.signature)).write(to: URL(fileURLWithPath: directory.file("sig.der")))
        let verified = try Self.run([
            "dgst", "-sha256", "-verify", directory.file("pub.pem"),
            "-signature", directory.file("sig.der"), directory.file("input"),
        ])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains("Verified OK"))

        var wrong = decoded.signature
        wrong[10] ^= 1
        try Data(Self.der(fromRaw: wrong)).write(to: URL(fileURLWithPath: directory.file("wrong.der")))
        let refused = try Self.run([
            "dgst", "-sha256", "-verify", directory.file("pub.pem"),
            "-signature", directory.file("wrong.der"), directory.file("input"),
        ])
        #expect(refused.status != 0)

        let signed = try Self.run([
            "dgst", "-sha256", "-sign", directory.file("key.pem"),
            "-out", directory.file("cli.der"), directory.file("input"),
        ])
        #expect(signed.status == 0, "\(signed.output)")
        let cliSignature = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("cli.der"))))
        let raw = try #require(Self.raw(fromDER: cliSignature))
        #expect(key.verify(raw, of: decoded.signingInput))
        #expect(!key.verify(raw, of: decoded.signingInput + [0]))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: Self.openssl)))
    func rs256AgainstTheOpenSSLCommand() throws {
        let directory = try TemporaryDirectory(prefix: "ringd-jwt")
        defer { directory.remove() }
        let key = try SigningKey(pem: Fixture.rsa2048Traditional)
        try write(key.publicKeyPEM, directory.file("pub.pem"))
        try Data(message).write(to: URL(fileURLWithPath: directory.file("input")))
        try Data(try key.sign(message)).write(to: URL(fileURLWithPath: directory.file("sig")))
        let verified = try Self.run([
            "dgst", "-sha256", "-verify", directory.file("pub.pem"),
            "-signature", directory.file("sig"), directory.file("input"),
        ])
        #expect(verified.status == 0, "\(verified.output)")
    }

    private static let openssl = "/usr/bin/openssl"

    private static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try Command.run(openssl, arguments)
    }

    private func write(_ text: String, _ path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// `SEQUENCE { INTEGER r, INTEGER s }` for a 64-byte r‖s, encoded here
    /// so that the check against the command does not rest on SignalCrypto's
    /// own conversion.
    static func der(fromRaw raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop(while: { $0 == 0 }))
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0 ..< 32]) + integer(raw[32 ..< 64])
        return [0x30, UInt8(body.count)] + body
    }

    /// r‖s, each left-padded to 32 bytes, of a DER ECDSA P-256 signature.
    static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        guard der.count >= 8, der[0] == 0x30, Int(der[1]) == der.count - 2 else { return nil }
        var index = 2
        var raw: [UInt8] = []
        for _ in 0 ..< 2 {
            guard index + 2 <= der.count, der[index] == 0x02 else { return nil }
            let length = Int(der[index + 1])
            index += 2
            guard index + length <= der.count else { return nil }
            let value = der[index ..< index + length].drop(while: { $0 == 0 })
            index += length
            guard value.count <= 32 else { return nil }
            raw += [UInt8](repeating: 0, count: 32 - value.count) + value
        }
        return index == der.count ? raw : nil
    }
}

/// Keys made once with the openssl command (`genpkey`, `ec`, `genrsa
/// -traditional`, `pkey -pubout`). None guards anything.
private enum Fixture {
    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`.
    static let p256PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgb7K/8036xVmY1rYI
        zgHjS+sK9nUYEBiLeRX45+dbVdahRANCAAQ1qCGRHINMldofARBvZz1CrIHZAVlq
        lUOR8aTLC3e8KGIdIo6/afGA93Zt6XmbwvHIq3Y0m3BhdPzgSBC117v5
        -----END PRIVATE KEY-----

        """
    /// `openssl ec, the same key`.
    static let p256Traditional = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIG+yv/NN+sVZmNa2CM4B40vrCvZ1GBAYi3kV+OfnW1XWoAoGCCqGSM49
        AwEHoUQDQgAENaghkRyDTJXaHwEQb2c9QqyB2QFZapVDkfGkywt3vChiHSKOv2nx
        gPd2bel5m8LxyKt2NJtwYXT84EgQtde7+Q==
        -----END EC PRIVATE KEY-----

        """
    /// `openssl pkey -pubout, the same key`.
    static let p256PublicKey = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENaghkRyDTJXaHwEQb2c9QqyB2QFZ
        apVDkfGkywt3vChiHSKOv2nxgPd2bel5m8LxyKt2NJtwYXT84EgQtde7+Q==
        -----END PUBLIC KEY-----

        """
    /// `genpkey P-256 with -aes-128-cbc -pass pass:secret`.
    static let p256Encrypted = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAjXVGZI2EiDaQICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEAQIEEGOK2lHZ/ynK1MuK/2yWFBkEgZCS
        01pWYH/aQdDqWg4FSXiBftM5RT88rGi0ZAYhczqJEc/PPp/ch7vzpKKYHkt48t9r
        ldKmeK0WoHXwb4BBuvcXkM0ERs1okNJJ3XIcjVQ/yxDaCdD3/+W9+lr8jbhZK7Q3
        Sjk0kwWnJrZvwEOKG5OgiZHVpdKdOdht20giZNwVxzPCQGj5bwlJ7GveePgCJtY=
        -----END ENCRYPTED PRIVATE KEY-----

        """
    /// `genpkey ec_paramgen_curve:P-384`.
    static let p384PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDBvsel2b1ByDkEIQPlg
        Hz4WtK+tjjrN0REDRuuQTjB4HHRr38sI0Lv/Enga19vd/puhZANiAATK3wKxCaqe
        zS4lo6femySZrRcJqK1fGNl7kRqH3QtHu7lpuXfadtkBjz8BW0bo9CO2PLJt1LXj
        ZpsgUIwdKha8iPBOtIg5AIxGJKcCEBL5y2JWsj9XRUSACN6Wixltsyc=
        -----END PRIVATE KEY-----

        """
    /// `genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024`.
    static let rsa1024PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBAOfXJx2DZMNB+g/m
        ADmZfu0D9r5LtxYznHXDwQSfDD0nOx/d52TBnd/ZJCm5KPwKCgvdZZoEfRrFC3Qk
        bZrFX8RNP1KBHC+3PGFxePEzjZiIYWZqAjky826/zKTj11itVWC5/RQpUA2nxNZv
        lHLsdqcMOBhXr9OZGy4G/YjqqB3xAgMBAAECgYAC2tRheae4+8v/fB6OlwRIGN9l
        8nq7rEEF9jYfP3IgIqaIuuvJgtTV18+pL92AVQNQqBZDMkD0Hm8IrBYpbLrEIwta
        qm4UJ7veiVnVtEBxAALLTT29kUHiiXZCZETmgMowZH6Q2wcFM6FxLCQyDSoBWYg+
        FiEhxW8sIV2TL3ChkQJBAPXhE3a2++1XCZKN5qM8WbOdBZ6aCXSmgE8iF3Y+72VR
        AsXD7txw3N1vyqDtxgAN0kLooPQENSFEkCfR8KTcX4UCQQDxYiUYwGCTpIsw9iBs
        vfk3LALijQuUmcPSb5hdAc1OJFlLylLK2WhqU4XA5MpPrsZXPTA2jiYPfUwsqqCE
        B7J9AkAFOPKg4uIW+HJLmpf7f5yoI/2qkLsCr0aqZ5738/5BuKbGbJL2O691RJqZ
        MHO0LJb6tNY2WKCIRFyLe/oQhl3BAkEA1tmRxWcuTxwNXIYmtEOfuHDvHHGIljsL
        Jpp31okNEXmfFau/Z5h9rO4sxlWekbAyEGKBMH3z+KOBEtzIxNwJDQJAMDcX0DyS
        aIIRtYI2RP6DOvLEh8XW05GrUAmLtX7J4mRwtmw2QP1Ny6RIiDLb+5MBwbxPz6Vu
        ZHz0WLlrAjqhcg==
        -----END PRIVATE KEY-----

        """
    /// `genpkey -algorithm ED25519`.
    static let ed25519PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIGLsbxdhKhF62btgwN2fx5cRglCcNs1vWE8qurx0PFf/
        -----END PRIVATE KEY-----

        """
    /// `genrsa -traditional 2048`.
    static let rsa2048Traditional = """
        -----BEGIN RSA PRIVATE KEY-----
        MIIEpAIBAAKCAQEAscgBOAZCZawRNjInz8Q+whp/WlVX9x075LESbXCjqb2iMN30
        zot4KOBCmPChwR8+ACV2JXkLTlb+oHlq0uBWVuuwpCL5TR54zudF50voI/gO0mHQ
        ilZJ3vC4uMtdfCeMdF9FYYZhVsxbxZQ76NlqBnqkwqMp+v1kZqliQSynWx/vRRWW
        OfYf2YPpAGDDN+/hOibPSglFm/cdnwyOctGPS6kAmIkt3CDlfGsXRYoGSnfGFsv1
        JVaC+zZpCoMqwVIgEk9w5eAHEBIUIkHMxrjZdihZt0M1rvTKJya1mh3/UkDAgiGy
        ggmAjdIzFHvTTnfcoFyEwK4MH+OPnkXeo6YH2wIDAQABAoIBAA81EpWeQ3O7AkXm
        iG1HVi74YUhy4HFs+MCZPQBLkFRmukb/1X8NgxvMAyZd/xgr+fu9OJv//K2Y13MW
        r8KWGgyZYKTJsRWds6vPMLWWUqcxAuOQJmyO8Qa3BLYZ/0ctguA5fg/XlN/93yPJ
        iE5kuqMPPqS/nEmx/zKg7pywmyg6MISkYG7GgV6eLFwjFHzlgzvl76Tb65WBKxul
        iG3Pc/LXC0X0VGE9AXLYQagyve7UXxxEfmEPu/rd5gb2OD+W5ixy2Azl9I+nB9o0
        pUSLL53VVfsTjT7VVIY0+syfO85yJOgVQ5BlBnHwHG62p24B/mVmFVehRFtSCDcY
        IP7tiVECgYEA44Z6EBzpVSQnkdJSMIP6uZ/ZazI+Xy5HXI2zncxKOnvIWXiMSLDL
        kQYfwBaSemGdC2bVpWxw2oRQMXg5E9M+wHCbuVSWZi4uslREB+6Hhtolfk/ruiVe
        /OscrRPY0sSuEIJzz9nYvXxbeMBmUTfpq7gDOSxjirJlg1+hjDHuD38CgYEAyAfQ
        WvPohuPHD77AF2hV9ZSWHHQOdvCe1Hvmro6a+nj6CaANOmaLLwX4km+zxeyVxvzh
        dV7uYNVun9TzFmQFxq63QZR74pErpbLAgpNO/3Ow2b2rrL9C5xotmzhFs9QVIygK
        JUCvlP5ZqvJ+Qgj5NlLo7LMiC/MXac6nmxhfdaUCgYEAsRhj/BS03YuFrS/6vz6L
        Ml6keZajC6zW6Mh27TUs9baRbGqzLoVF/by5i+dF3jIKbex+EQOGF9/zF35PVwoP
        BvTfkPKxGhmKSU3johTcsm8rzdRhVANwmwZZzLHtC6kBH2KayEb1OBAKlsOTIFaX
        8AwLnj3ZwQQ4lXgjIx9d//sCgYEAvPzc90HhHKjSJ2cimDsElA05slJYZDm85qbV
        cXDcre9k1Xk5ZkcCE4CBtOECqep4LFQ6M6locWbVqP8KWMpRxsDF9ZjzX0GnSltT
        lUrWZXYJzf9s1r6x2CUcl72X5WpoOhoXU9EE0zFoyKFpdryBsLiuxwwMC9w178rH
        AjsJ3d0CgYAwiXilpNyX1GPKaqoRDtmg+wV7T98FslgPiZMPxDQe2WPAAA3p/2Bu
        xiyB4ZDOKHCCZ3+FP2Ccwgk0PXhinIW152w826YZqnOsBT4k9beqQitFHck0//EH
        abni2pU2DxuuDT4dG+KEdyB8L0qptK6m99CuV2VL9nhIMnztZMroAw==
        -----END RSA PRIVATE KEY-----

        """
}
