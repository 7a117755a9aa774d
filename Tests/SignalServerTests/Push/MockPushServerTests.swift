import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// The mock push server itself (Tests/Push/mock_push.py through
/// ``MockPushServer``), driven by ringd's libcurl client with tokens signed
/// by the `openssl` CLI: what it accepts, what it refuses, and its script.
@Suite(.blocking) struct MockPushServerTests {
    static let deviceToken = "5f0c2a9e8d7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f"

    @Test func aValidAPNsRequestIsAcceptedOverHTTP2() throws {
        let rig = try PushRig()
        defer { rig.close() }
        let response = try #require(rig.client.exchange(try rig.apnsRequest(token: Self.deviceToken)))
        #expect(response.error == nil)
        #expect(response.status == 200)
        #expect(response.httpVersion == "2")
        #expect(response.body.isEmpty)
        let request = try #require(try rig.server.waitForRequests(count: 1, kind: .apns).first)
        #expect(request.violations == [])
        #expect(request.status == 200)
        #expect(request.httpVersion == "2")
        #expect(request.token == Self.deviceToken)
        #expect(request.path == "/3/device/\(Self.deviceToken)")
        #expect(request.headers["apns-push-type"] == "voip")
        #expect(request.jwtHeader?["alg"]?.stringValue == "ES256")
        #expect(request.jwtClaims?["iss"]?.stringValue == PushRig.teamId)
        #expect(request.body?["callType"]?.stringValue == "video")
    }

    @Test func aDERSignatureIsAnInvalidProviderToken() throws {
        let rig = try PushRig()
        defer { rig.close() }
        let jwt = try rig.providerToken(rawSignature: false)
        let response = try #require(rig.client.exchange(try rig.apnsRequest(token: Self.deviceToken, jwt: jwt)))
        #expect(response.status == 403)
        #expect(try JSONValue.parse(response.body)["reason"]?.stringValue == "InvalidProviderToken")
        let request = try #require(try rig.server.waitForRequests(count: 1, kind: .apns).first)
        #expect(request.status == 403)
        #expect(request.violations.contains { $0.contains("not 64 of raw r||s") }, "\(request.violations)")
    }

    @Test func aScripted410IsGivenOnceThenTheUsualSuccess() throws {
        let rig = try PushRig(script: [Self.deviceToken: [MockPushAnswer(status: 410, reason: "Unregistered")]])
        defer { rig.close() }
        let first = try #require(rig.client.exchange(try rig.apnsRequest(token: Self.deviceToken)))
        #expect(first.status == 410)
        let answer = try JSONValue.parse(first.body)
        #expect(answer["reason"]?.stringValue == "Unregistered")
        #expect(answer["timestamp"]?.integerValue != nil)
        let second = try #require(rig.client.exchange(try rig.apnsRequest(token: Self.deviceToken)))
        #expect(second.status == 200)
        let requests = try rig.server.waitForRequests(count: 2, kind: .apns)
        #expect(requests.map(\.status) == [410, 200])
        #expect(requests.allSatisfy { $0.violations.isEmpty }, "\(requests.map(\.violations))")
    }

    @Test func anAccessTokenFromTheJWTBearerGrantSendsAnFCMMessage() throws {
        let rig = try PushRig()
        defer { rig.close() }
        let accessToken = try rig.accessToken()
        #expect(accessToken == "mock-access-1")
        let response = try #require(
            rig.client.exchange(
                rig.fcmRequest(
                    accessToken: accessToken,
                    data: PushRig.incomingCallData)))
        #expect(response.error == nil)
        #expect(response.status == 200)
        #expect(try JSONValue.parse(response.body)["name"]?.stringValue == "projects/\(PushRig.project)/messages/1")
        let requests = try rig.server.waitForRequests(count: 2)
        #expect(requests.map(\.kind) == [.oauth, .fcm])
        #expect(
            requests.allSatisfy { $0.violations.isEmpty && $0.httpVersion == "2" },
            "\(requests.map(\.violations))")
        #expect(requests.first?.jwtClaims?["iss"]?.stringValue == PushRig.clientEmail)
        #expect(requests.last?.token == "fcm-registration-token")
    }

    @Test func anFCMDataValueThatIsANumberIsAViolation() throws {
        let rig = try PushRig()
        defer { rig.close() }
        let accessToken = try rig.accessToken()
        var data = PushRig.incomingCallData
        data[data.firstIndex { $0.key == "ringTimeout" }!].value = .integer(30)
        let response = try #require(rig.client.exchange(rig.fcmRequest(accessToken: accessToken, data: data)))
        #expect(response.status != nil)
        let request = try #require(try rig.server.waitForRequests(count: 1, kind: .fcm).first)
        #expect(request.violations == ["message.data.ringTimeout is a number, not a string"])
    }

    /// The mock holds missed-call alerts to their shape: an APNs alert on
    /// the app's own topic with `aps.alert`, an FCM notification message.
    @Test func anAlertOnTheVoIPTopicAndAMissedCallWithoutANotificationAreViolations() throws {
        let rig = try PushRig()
        defer { rig.close() }
        var apns = try rig.apnsRequest(token: String(repeating: "ab", count: 32))
        apns.headers = apns.headers.map { $0.0 == "apns-push-type" ? ($0.0, "alert") : $0 }
        _ = try #require(rig.client.exchange(apns))
        let alert = try #require(try rig.server.waitForRequests(count: 1, kind: .apns).first)
        #expect(alert.violations.contains("apns-topic '\(PushRig.topic)' of an alert is not a bundle id"))
        #expect(alert.violations.contains("aps.alert is not an object"), "\(alert.violations)")

        let accessToken = try rig.accessToken()
        let data: [(key: String, value: JSONValue)] = [
            ("type", .string("missed_call")), ("sessionId", .string("call-1")), ("callerUid", .string("alice")),
            ("callType", .string("audio")),
        ]
        _ = try #require(rig.client.exchange(rig.fcmRequest(accessToken: accessToken, data: data)))
        let missed = try #require(try rig.server.waitForRequests(count: 1, kind: .fcm).first)
        #expect(
            missed.violations == [
                "message.notification is not an object", "message.android.notification is not an object",
            ])
    }
}

/// A certificate, keys, a ``MockPushServer`` trusting them and ringd's
/// libcurl client trusting the certificate; requests and tokens built as
/// ringd is to build them, signed by the `openssl` CLI.
struct PushRig {
    static let keyId = "ABC123DEFG"
    static let teamId = "DEF123GHIJ"
    static let topic = "net.ringd.example.voip"
    static let clientEmail = "ringd-push@ringd-test.iam.gserviceaccount.com"
    static let project = "ringd-test"
    static let fcmScope = "https://www.googleapis.com/auth/firebase.messaging"
    static let incomingCallData: [(key: String, value: JSONValue)] = [
        ("type", .string("incoming_call")), ("sessionId", .string("call-1")), ("callerUid", .string("alice")),
        ("callerName", .string("Alice")), ("callType", .string("audio")),
        ("initiatedAt", .string(String(Int64(Date().timeIntervalSince1970 * 1000)))), ("ringTimeout", .string("30")),
    ]

    let certificate: CertificateFiles
    let keys: MockPushKeys
    let server: MockPushServer
    let client: OutboundHTTPClient

    init(script: [String: [MockPushAnswer]]? = nil) throws {
        let certificate = try CertificateFiles()
        do {
            let keys = try MockPushKeys()
            do {
                server = try MockPushServer(
                    certificate: certificate, apnsPublicKey: keys.apnsPublicKeyPEM,
                    apnsKeyId: Self.keyId, apnsTeamId: Self.teamId,
                    fcmPublicKey: keys.fcmPublicKeyPEM, fcmClientEmail: Self.clientEmail,
                    fcmProject: Self.project, script: script)
                client = try OutboundHTTPClient(maxConnectionsPerHost: 2, caFile: certificate.certificatePath)
            } catch {
                keys.remove()
                throw error
            }
            self.keys = keys
        } catch {
            certificate.remove()
            throw error
        }
        self.certificate = certificate
    }

    /// Stops everything; the mock must exit 0 on SIGTERM with nothing on
    /// its stderr (where a Python exception in it would show).
    func close() {
        client.close()
        let termination = server.stop()
        #expect(termination == .exited(0), "\(server.standardError)")
        #expect(server.standardError == "")
        keys.remove()
        certificate.remove()
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// An APNs provider token: ES256 over `header.claims`, the signature
    /// raw r||s as APNs wants it, or left in openssl's DER when
    /// `rawSignature` is false.
    func providerToken(rawSignature: Bool = true) throws -> String {
        try OpenSSLJWT.token(
            header: .object([("alg", .string("ES256")), ("kid", .string(Self.keyId))]),
            claims: .object([("iss", .string(Self.teamId)), ("iat", .integer(Self.now))]),
            keyPath: keys.apnsPrivateKeyPath,
            transform: { der in
                rawSignature ? try OpenSSLJWT.rawECDSASignature(der: der) : der
            })
    }

    /// A VoIP push for an incoming video call to `token`, with every header
    /// APNs wants for one.
    func apnsRequest(token: String, jwt: String? = nil) throws -> OutboundRequest {
        let jwt = try jwt ?? providerToken()
        let body = JSONValue.object([
            ("aps", .object([])), ("sessionId", .string("call-1")), ("callerUid", .string("alice")),
            ("callerName", .string("Alice")), ("callType", .string("video")),
            ("initiatedAt", .integer(Int64(Date().timeIntervalSince1970 * 1000))), ("ringTimeout", .integer(30)),
        ])
        return OutboundRequest(
            url: "\(server.baseURL)/3/device/\(token)",
            headers: [
                ("Authorization", "bearer \(jwt)"), ("apns-push-type", "voip"), ("apns-topic", Self.topic),
                ("apns-priority", "10"), ("apns-expiration", String(Self.now + 600)),
                ("apns-id", UUID().uuidString), ("apns-collapse-id", "call-1"), ("Content-Type", "application/json"),
            ], body: Array(body.serialized.utf8), timeout: 20)
    }

    /// The access token the JWT-bearer grant returns for an RS256 assertion
    /// of the service account.
    func accessToken() throws -> String {
        let assertion = try OpenSSLJWT.token(
            header: .object([("alg", .string("RS256")), ("typ", .string("JWT")), ("kid", .string("key-1"))]),
            claims: .object([
                ("iss", .string(Self.clientEmail)), ("scope", .string(Self.fcmScope)),
                ("aud", .string("\(server.baseURL)/token")), ("iat", .integer(Self.now)),
                ("exp", .integer(Self.now + 3600)),
            ]),
            keyPath: keys.fcmPrivateKeyPath)
        // Base64url and dots need no percent-encoding in a form.
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        let response = try #require(
            client.exchange(
                OutboundRequest(
                    url: "\(server.baseURL)/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                    body: Array(form.utf8), timeout: 20)))
        #expect(response.status == 200, "\(response.bodyText)")
        return try #require(try JSONValue.parse(response.body)["access_token"]?.stringValue)
    }

    /// An FCM v1 send of `data` to one registration token.
    func fcmRequest(accessToken: String, data: [(key: String, value: JSONValue)]) -> OutboundRequest {
        let body = JSONValue.object([
            (
                "message",
                .object([
                    ("token", .string("fcm-registration-token")), ("data", .object(data)),
                    ("android", .object([("priority", .string("high")), ("ttl", .string("30s"))])),
                ])
            )
        ])
        return OutboundRequest(
            url: "\(server.baseURL)/v1/projects/\(Self.project)/messages:send",
            headers: [("Authorization", "Bearer \(accessToken)")],
            body: Array(body.serialized.utf8), timeout: 20)
    }
}

/// Compact JWS signed by `openssl dgst -sha256 -sign` (RSASSA-PKCS1-v1_5
/// for an RSA key, DER-encoded ECDSA for an EC key), for tests that need a
/// signer other than ringd's.
enum OpenSSLJWT {
    static func base64url(_ bytes: some Collection<UInt8>) -> String {
        var text = Base64.encode(bytes)
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// `base64url(header).base64url(claims).base64url(signature)`, the
    /// signature as openssl made it, passed through `transform`.
    static func token(
        header: JSONValue, claims: JSONValue, keyPath: String,
        transform: ([UInt8]) throws -> [UInt8] = { $0 }
    ) throws -> String {
        let input = base64url(Array(header.serialized.utf8)) + "." + base64url(Array(claims.serialized.utf8))
        let signature = try transform(sign(Array(input.utf8), keyPath: keyPath))
        return input + "." + base64url(signature)
    }

    /// openssl's signature of SHA-256(`input`) with the PEM key at `keyPath`.
    static func sign(_ input: [UInt8], keyPath: String) throws -> [UInt8] {
        let directory = try TemporaryDirectory(prefix: "ringd-jws")
        defer { directory.remove() }
        try Data(input).write(to: URL(fileURLWithPath: directory.file("input")))
        try MockPushKeys.openssl(
            [
                "dgst", "-sha256", "-sign", keyPath, "-out", directory.file("signature"),
                directory.file("input"),
            ], in: directory)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.file("signature"))))
    }

    /// The raw r||s (32 bytes each) of a DER ECDSA-Sig-Value
    /// (`SEQUENCE { INTEGER r, INTEGER s }`), as JWS's ES256 wants it.
    static func rawECDSASignature(der: [UInt8]) throws -> [UInt8] {
        var index = 0
        func byte() throws -> UInt8 {
            guard index < der.count else { throw MockPushError("DER signature cut short") }
            defer { index += 1 }
            return der[index]
        }
        func length() throws -> Int {
            let first = try byte()
            guard first & 0x80 != 0 else { return Int(first) }
            guard first == 0x81 else { throw MockPushError("DER length form \(first) unexpected") }
            return Int(try byte())
        }
        func integer() throws -> [UInt8] {
            guard try byte() == 0x02 else { throw MockPushError("DER INTEGER expected") }
            let count = try length()
            guard index + count <= der.count else { throw MockPushError("DER INTEGER cut short") }
            let value = der[index ..< index + count].drop { $0 == 0 }
            index += count
            guard value.count <= 32 else { throw MockPushError("ECDSA integer longer than 32 bytes") }
            return [UInt8](repeating: 0, count: 32 - value.count) + value
        }
        guard try byte() == 0x30 else { throw MockPushError("DER SEQUENCE expected") }
        guard try length() == der.count - index else { throw MockPushError("DER SEQUENCE length wrong") }
        return try integer() + integer()
    }
}
