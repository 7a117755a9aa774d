import Foundation
import SignalCrypto
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// A ringd whose push goes to the mock APNs and FCM (Tests/Push/mock_push.py)
/// over HTTP/2 and TLS with a test CA; the mock verifies the JWTs with the
/// public keys, every header, the payloads and the OAuth grant.
final class RingdPushRig {
    static let keyId = "ABC123DEFG"
    static let teamId = "DEF123GHIJ"
    static let bundleId = "net.ringd.example"
    static let project = "ringd-test"
    static let clientEmail = "ringd-push@ringd-test.iam.gserviceaccount.com"
    static let iphoneToken = String(repeating: "a1", count: 32)
    static let ipadToken = String(repeating: "b2", count: 32)
    static let pixelToken = "pixel-registration-token:" + String(repeating: "p", count: 40)
    /// The iPhone's regular APNs token, for missed-call alerts.
    static let alertToken = String(repeating: "c3", count: 32)

    /// The APNs and service-account keys, made once for every rig of the
    /// test process: an RSA key takes a while to make, and the suites run
    /// beside timing-sensitive ones.
    struct Keys: Sendable {
        let apnsPrivateKeyPEM: String
        let apnsPublicKeyPEM: String
        let fcmPrivateKeyPEM: String
        let fcmPublicKeyPEM: String

        static let shared = Result { () throws(CryptoError) -> Keys in
            let apns = try SigningKey.generate(.es256), fcm = try SigningKey.generate(.rs256)
            return Keys(
                apnsPrivateKeyPEM: apns, apnsPublicKeyPEM: try SigningKey(pem: apns).publicKeyPEM,
                fcmPrivateKeyPEM: fcm, fcmPublicKeyPEM: try SigningKey(pem: fcm).publicKeyPEM)
        }
    }

    let certificate: CertificateFiles
    let keys: Keys
    let mock: MockPushServer
    let directory: TemporaryDirectory
    private(set) var harness: SignalingIntegration.Harness
    private let configure: (inout ServerConfig) -> Void

    init(
        script: [String: [MockPushAnswer]]? = nil, adjust: (inout PushSettings) -> Void = { _ in },
        server: @escaping (inout ServerConfig) -> Void = { _ in }
    ) throws {
        certificate = try CertificateFiles()
        keys = try Keys.shared.get()
        directory = try TemporaryDirectory(prefix: "ringd-push-rig")
        mock = try MockPushServer(
            certificate: certificate, apnsPublicKey: keys.apnsPublicKeyPEM, apnsKeyId: Self.keyId,
            apnsTeamId: Self.teamId, fcmPublicKey: keys.fcmPublicKeyPEM,
            fcmClientEmail: Self.clientEmail, fcmProject: Self.project, script: script)
        let account: JSONValue = .object([
            ("type", .string("service_account")), ("project_id", .string(Self.project)),
            ("client_email", .string(Self.clientEmail)), ("private_key", .string(keys.fcmPrivateKeyPEM)),
            ("token_uri", .string(mock.baseURL + "/token")),
        ])
        let accountPath = try directory.writeSecret(account.serialized, named: "service-account.json")
        let p8 = try directory.writeSecret(keys.apnsPrivateKeyPEM, named: "AuthKey_\(Self.keyId).p8")
        let (storePath, base, caFile) = (directory.file("ringd.sqlite"), mock.baseURL, certificate.certificatePath)
        var push = PushSettings()
        push.apns.keyFile = p8
        push.apns.keyId = Self.keyId
        push.apns.teamId = Self.teamId
        push.apns.bundleId = Self.bundleId
        push.apns.productionURL = base
        push.apns.sandboxURL = base
        push.fcm.serviceAccountFile = accountPath
        push.fcm.baseURL = base
        push.caFile = caFile
        push.retrySeconds = [0.2]
        adjust(&push)
        configure = { [push] config in
            config.storePath = storePath
            config.push = push
            server(&config)
        }
        harness = try SignalingIntegration.Harness(configure)
    }

    /// Stops ringd (its live calls stay, `calls.onRestart: resume`) and starts
    /// a new one on the same store and port 0.
    func restart() throws {
        harness.finish()
        harness = try SignalingIntegration.Harness(configure)
    }

    func finish() {
        harness.finish()
        _ = mock.stop()
        certificate.remove()
        directory.remove()
    }

    /// Registers `token` (and an APNs `alertToken`) for `uid`'s device over REST.
    func register(
        _ uid: String, _ deviceId: String, _ platform: PushPlatform, _ token: String, alertToken: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let alert = alertToken.map { #","alertToken":"\#($0)""# } ?? ""
        let response = try harness.rest(
            "PUT", "/v1/users/\(uid)/devices/\(deviceId)/push-token",
            body: #"{"platform":"\#(platform.rawValue)","token":"\#(token)"\#(alert)}"#)
        #expect(response.status == 200, "\(response)", sourceLocation: sourceLocation)
    }

    /// How pushes to the device have gone, from REST.
    func pushState(_ uid: String, _ deviceId: String) throws -> JSONValue? {
        try harness.rest("GET", "/v1/users/\(uid)/devices/\(deviceId)/push-token").json?["push"]
    }

    /// Waits until the device's last push outcome is `outcome`.
    func waitForOutcome(
        _ uid: String, _ deviceId: String, _ outcome: PushOutcome,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let reached = waitUntil(timeout: 15) {
            (try? pushState(uid, deviceId))??["lastOutcome"]?.stringValue == outcome.rawValue
        }
        #expect(
            reached,
            "\(uid)/\(deviceId) never reached \(outcome.rawValue): \(String(describing: try? pushState(uid, deviceId)))",
            sourceLocation: sourceLocation)
    }

    /// Bob's iPhone has an APNs token; alice calls him; once the push to it
    /// is sent, the mock's requests for it.
    func pushOneCallToTheIPhone() throws -> [MockPushRequest] {
        try register("bob", "iphone", .apnsVoip, Self.iphoneToken)
        let alice = try harness.device("alice", "a1")
        _ = try alice.initiate(to: "bob").call()
        waitForOutcome("bob", "iphone", .sent)
        return try requests(for: Self.iphoneToken)
    }

    /// The mock's requests for `token`.
    func requests(for token: String) throws -> [MockPushRequest] {
        try mock.requests.filter { $0.token == token }
    }
}

@Suite(.blocking) struct PushDeliveryTests {
    @Test func anOfflineCalleeGetsOnePushPerDeviceAndFCMHearsTheCancel() throws {
        let rig = try RingdPushRig()
        defer { rig.finish() }
        let h = rig.harness
        let iphone = try h.device("bob", "iphone")
        let registered = try iphone.request(
            "registerPushToken",
            [
                ("platform", .string("apns-voip")),
                ("token", .string(RingdPushRig.iphoneToken.uppercased())),
            ])
        #expect(registered.ok, "\(registered)")
        #expect(registered.data?["pushToken"]?["token"]?.stringValue == RingdPushRig.iphoneToken)
        iphone.close()
        try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try h.device("alice", "a1")

        let metadata: JSONValue = .object([("callerName", .string("Alice Liddell"))])
        let call = try alice.initiate(to: "bob", "video", timeout: 20, metadata: metadata).call()
        _ = try rig.mock.waitForRequests(count: 1, kind: .apns)
        _ = try rig.mock.waitForRequests(count: 1, kind: .fcm)
        _ = try alice.cancel(call.sessionId).call()
        // The cancel, and the missed-call alert (PushAlertDeliveryTests), in either order.
        let fcm = try rig.mock.waitForRequests(count: 3, kind: .fcm)

        let all = try rig.mock.requests
        #expect(
            all.allSatisfy { $0.violations.isEmpty && $0.httpVersion == "2" && $0.status == 200 },
            "\(all.map { ($0.path, $0.status, $0.violations) })")
        let apns = try #require(try rig.requests(for: RingdPushRig.iphoneToken).first)
        #expect(try rig.requests(for: RingdPushRig.iphoneToken).count == 1, "one push per device")
        #expect(apns.headers["apns-topic"] == RingdPushRig.bundleId + ".voip")
        #expect(apns.headers["apns-push-type"] == "voip")
        #expect(apns.headers["apns-priority"] == "10")
        #expect(apns.headers["apns-collapse-id"] == call.sessionId)
        #expect(apns.headers["apns-expiration"] == String((call.call.ringDeadline + 999) / 1000))
        #expect(apns.jwtHeader?["kid"]?.stringValue == RingdPushRig.keyId)
        #expect(apns.jwtClaims?["iss"]?.stringValue == RingdPushRig.teamId)
        #expect(apns.body?["sessionId"]?.stringValue == call.sessionId)
        #expect(apns.body?["callerUid"]?.stringValue == "alice")
        #expect(apns.body?["callType"]?.stringValue == "video")
        #expect(apns.body?["callerName"] == nil, "the caller's own metadata names no one (push.trustCallerMetadata)")
        #expect(apns.body?["initiatedAt"]?.integerValue == call.initiatedAt)
        #expect(apns.body?["ringTimeout"]?.integerValue == 20)
        #expect(apns.bodyBytes <= APNsPush.maxPayloadBytes)

        let types = fcm.map { $0.body?["message"]?["data"]?["type"]?.stringValue ?? "" }
        #expect(types.first == "incoming_call" && types.sorted() == ["call_cancelled", "incoming_call", "missed_call"])
        #expect(fcm.allSatisfy { $0.token == RingdPushRig.pixelToken })
        #expect(fcm.allSatisfy { $0.body?["message"]?["data"]?["sessionId"]?.stringValue == call.sessionId })
        #expect(fcm.first?.body?["message"]?["android"]?["priority"]?.stringValue == "high")
        let cancel = fcm.first { $0.body?["message"]?["data"]?["type"]?.stringValue == "call_cancelled" }
        #expect(cancel?.body?["message"]?["data"]?["status"]?.stringValue == "cancelled")
        let grants = all.filter { $0.kind == .oauth }
        #expect(grants.count == 1, "one access token serves every message")
        #expect(grants.first?.jwtClaims?["scope"]?.stringValue == FCMAccessToken.scope)
    }

    @Test func aConnectedDeviceGetsNoPushInOfflineModeAndOneInAllMode() throws {
        for mode in [PushMode.offline, .all] {
            let rig = try RingdPushRig { $0.mode = mode }
            defer { rig.finish() }
            let h = rig.harness
            let iphone = try h.device("bob", "iphone")
            #expect(
                try iphone.request(
                    "registerPushToken",
                    [
                        ("platform", .string("apns-voip")),
                        ("token", .string(RingdPushRig.iphoneToken)),
                    ]
                ).ok)
            try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
            let alice = try h.device("alice", "a1")
            let call = try alice.initiate(to: "bob").call()
            _ = try iphone.waitForEvent(call.sessionId, .initiated)
            _ = try alice.cancel(call.sessionId).call()
            // The cancel to the pixel follows its ring: by then every ring has left.
            _ = try rig.mock.waitForRequests(count: 2, kind: .fcm)
            #expect(try rig.requests(for: RingdPushRig.iphoneToken).count == (mode == .all ? 1 : 0), "\(mode)")
        }
    }

    @Test func unregisteredPurgesTheTokenAndTheNextCallDoesNotPushIt() throws {
        let rig = try RingdPushRig(script: [
            RingdPushRig.iphoneToken: [MockPushAnswer(status: 410, reason: "Unregistered")]
        ])
        defer { rig.finish() }
        let h = rig.harness
        try rig.register("bob", "iphone", .apnsVoip, RingdPushRig.iphoneToken)
        try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try h.device("alice", "a1")
        let first = try alice.initiate(to: "bob").call()
        _ = try rig.mock.waitForRequests(count: 1, kind: .apns)
        #expect(
            waitUntil(timeout: 10) {
                (try? h.rest("GET", "/v1/users/bob/devices/iphone/push-token"))?.status == 404
            }, "the token is removed")
        _ = try alice.cancel(first.sessionId).call()
        let second = try alice.initiate(to: "bob").call()
        _ = try alice.cancel(second.sessionId).call()
        _ = try rig.mock.waitForRequests(count: 4, kind: .fcm)
        #expect(try rig.requests(for: RingdPushRig.iphoneToken).map(\.status) == [410])
        let tokens = try h.rest("GET", "/v1/users/bob/push-tokens").json?["devices"]
        #expect(tokens.map { if case .array(let devices) = $0 { devices.count } else { -1 } } == 1)
    }

    @Test func anExpiredProviderTokenIsRenewedAndThePushRetriedOnce() throws {
        let rig = try RingdPushRig(script: [
            RingdPushRig.iphoneToken: [MockPushAnswer(status: 403, reason: "ExpiredProviderToken")]
        ])
        defer { rig.finish() }
        let requests = try rig.pushOneCallToTheIPhone()
        #expect(requests.map(\.status) == [403, 200])
        #expect(requests.allSatisfy { $0.violations.isEmpty }, "\(requests.map(\.violations))")
        let issued = requests.compactMap { $0.jwtClaims?["iat"]?.integerValue }
        #expect(issued.count == 2 && issued[1] > issued[0], "a new provider token: \(issued)")
        #expect(requests[0].headers["authorization"] != requests[1].headers["authorization"])
    }

    @Test func a503IsRetriedWhileTheCallRingsAndNotAfter() throws {
        let failures = Array(repeating: MockPushAnswer(status: 503, reason: "ServiceUnavailable"), count: 1000)
        let rig = try RingdPushRig(script: [RingdPushRig.iphoneToken: failures])
        defer { rig.finish() }
        try rig.register("bob", "iphone", .apnsVoip, RingdPushRig.iphoneToken)
        try rig.register("carol", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try rig.harness.device("alice", "a1")
        let call = try alice.initiate(to: "bob").call()
        #expect(waitUntil(timeout: 10) { ((try? rig.requests(for: RingdPushRig.iphoneToken))?.count ?? 0) >= 3 })
        let cancelled = try alice.cancel(call.sessionId).call()
        rig.waitForOutcome("bob", "iphone", .gaveUp)
        let settled = try rig.requests(for: RingdPushRig.iphoneToken)
        // A later call's push has come and gone; none of the first call's retries followed.
        let later = try alice.initiate(to: "carol").call()
        _ = try rig.mock.waitForRequests(count: 1, kind: .fcm)
        _ = try alice.cancel(later.sessionId).call()
        _ = try rig.mock.waitForRequests(count: 2, kind: .fcm)
        let final = try rig.requests(for: RingdPushRig.iphoneToken)
        #expect(final.count == settled.count, "no retry after the call stopped ringing")
        #expect(final.allSatisfy { $0.status == 503 })
        let endedAt = Double(cancelled.call.endedAt ?? 0)
        #expect(
            final.filter { $0.receivedAt > endedAt + 250 }.isEmpty,
            "only a retry already in flight may arrive after the cancel")
        // Each request after the first left because the one before was counted as retried.
        #expect(try rig.pushState("bob", "iphone")?["counts"]?["retried"]?.integerValue ?? 0 >= Int64(final.count - 1))
    }

    @Test func aRetryWaitsAsLongAsTheServiceSays() throws {
        let rig = try RingdPushRig(script: [
            RingdPushRig.iphoneToken: [
                MockPushAnswer(
                    status: 429, reason: "TooManyRequests",
                    retryAfter: 1)
            ]
        ]) { $0.retrySeconds = [0.01] }
        defer { rig.finish() }
        let requests = try rig.pushOneCallToTheIPhone()
        #expect(requests.map(\.status) == [429, 200])
        if requests.count == 2 {
            #expect(requests[1].receivedAt - requests[0].receivedAt >= 1000, "Retry-After: 1 is honoured")
        }
    }

    @Test func aCallStillRingingAfterARestartIsPushedAgain() throws {
        let rig = try RingdPushRig()
        defer { rig.finish() }
        try rig.register("bob", "iphone", .apnsVoip, RingdPushRig.iphoneToken)
        let alice = try rig.harness.device("alice", "a1")
        let call = try alice.initiate(to: "bob", timeout: 120).call()
        _ = try rig.mock.waitForRequests(count: 1, kind: .apns)
        try rig.restart()
        let pushes = try rig.mock.waitForRequests(count: 2, kind: .apns)
        #expect(pushes.map { $0.headers["apns-collapse-id"] } == [call.sessionId, call.sessionId])
        #expect(pushes.allSatisfy { $0.violations.isEmpty && $0.status == 200 })
        #expect(
            try rig.harness.rest("GET", "/v1/users/bob/devices/iphone/push-token").status == 200,
            "the token survived the restart")
    }

    @Test func aTokenRegisteredByAnotherUserMovesToThem() throws {
        let rig = try RingdPushRig()
        defer { rig.finish() }
        let h = rig.harness
        try rig.register("carol", "phone", .apnsVoip, RingdPushRig.ipadToken)
        let dave = try h.device("dave", "phone")
        #expect(
            try dave.request(
                "registerPushToken",
                [
                    ("platform", .string("apns-voip")),
                    ("token", .string(RingdPushRig.ipadToken)),
                ]
            ).ok)
        #expect(try h.rest("GET", "/v1/users/carol/devices/phone/push-token").status == 404)
        guard case .array(let daves)? = try h.rest("GET", "/v1/users/dave/push-tokens").json?["devices"] else {
            Issue.record("no devices list")
            return
        }
        #expect(daves.map { $0["pushToken"]?["token"]?.stringValue } == [RingdPushRig.ipadToken])
        let removed = try dave.request("unregisterPushToken")
        #expect(removed.data?["removed"]?.boolValue == true)
        #expect(try dave.request("unregisterPushToken").data?["removed"]?.boolValue == false)
    }

    @Test func anAPNsTokenNeedsATopicWhenNoBundleIdIsConfigured() throws {
        let rig = try RingdPushRig { $0.apns.bundleId = nil }
        defer { rig.finish() }
        let bob = try rig.harness.device("bob", "iphone")
        let refused = try bob.request(
            "registerPushToken",
            [
                ("platform", .string("apns-voip")),
                ("token", .string(RingdPushRig.iphoneToken)),
            ])
        #expect(refused.code == "ERR_VALIDATION" && refused.message.contains("topic"), "\(refused)")
        #expect(
            try bob.request(
                "registerPushToken",
                [
                    ("platform", .string("apns-voip")),
                    ("token", .string(RingdPushRig.iphoneToken)),
                    ("topic", .string(RingdPushRig.bundleId)),
                ]
            ).ok)
    }

    @Test func badTokensAreRefusedWithValidationErrors() throws {
        let rig = try RingdPushRig()
        defer { rig.finish() }
        let h = rig.harness
        let bob = try h.device("bob", "iphone")
        for (platform, token) in [
            ("apns-voip", "not-hex"), ("apns-voip", "abcd"), ("fcm", "x"), ("sms", "0123456789abcdef0123456789abcdef"),
        ] {
            let reply = try bob.request(
                "registerPushToken", [("platform", .string(platform)), ("token", .string(token))])
            #expect(reply.code == "ERR_VALIDATION", "\(platform) \(token): \(reply)")
            let rest = try h.rest(
                "PUT", "/v1/users/bob/devices/iphone/push-token",
                body: #"{"platform":"\#(platform)","token":"\#(token)"}"#)
            #expect(rest.status == 400 && rest.errorCode == "ERR_VALIDATION", "\(rest)")
        }
        #expect(try h.rest("GET", "/v1/users/bob/push-tokens").json?["devices"] == .array([]))
    }
}
