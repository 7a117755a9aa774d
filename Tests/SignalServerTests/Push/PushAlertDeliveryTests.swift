import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// Missed-call alerts over real sockets to the mock APNs and FCM
/// (Tests/Push/mock_push.py checks every header and payload), and who the
/// pushes say is calling.
@Suite(.blocking) struct PushAlertDeliveryTests {
    /// The mock's missed-call alerts so far: APNs alert pushes, FCM `missed_call` messages.
    static func alerts(_ rig: RingdPushRig) throws -> [MockPushRequest] {
        try rig.mock.requests.filter {
            $0.headers["apns-push-type"] == "alert"
                || $0.body?["message"]?["data"]?["type"]?.stringValue == "missed_call"
        }
    }

    /// Waits until the mock has `count` alerts; returns them.
    static func waitForAlerts(_ rig: RingdPushRig, count: Int) throws -> [MockPushRequest] {
        let arrived = waitUntil(timeout: 15) { ((try? alerts(rig)) ?? []).count >= count }
        #expect(arrived, "alerts: \(String(describing: try? alerts(rig)))")
        return try alerts(rig)
    }

    @Test func anUnansweredCallAlertsEveryPushedDeviceThatCanShowOne() throws {
        let rig = try RingdPushRig()
        defer { rig.finish() }
        let h = rig.harness
        // The iPhone registers its regular token beside the VoIP one, as the app would.
        let iphone = try h.device("bob", "iphone")
        let registered = try iphone.request(
            "registerPushToken",
            [
                ("platform", .string("apns-voip")), ("token", .string(RingdPushRig.iphoneToken)),
                ("alertToken", .string(RingdPushRig.alertToken.uppercased())),
            ])
        #expect(registered.data?["pushToken"]?["alertToken"]?.stringValue == RingdPushRig.alertToken, "\(registered)")
        iphone.close()
        // The iPad has no alert token: its VoIP token cannot show an alert.
        try rig.register("bob", "ipad", .apnsVoip, RingdPushRig.ipadToken)
        try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try h.device("alice", "a1")
        let call = try alice.initiate(to: "bob", "video", timeout: 1).call()
        _ = try alice.waitForEvent(call.sessionId, .unanswered)

        let alerts = try Self.waitForAlerts(rig, count: 2)
        #expect(alerts.count == 2)
        #expect(
            alerts.allSatisfy { $0.violations.isEmpty && $0.status == 200 && $0.httpVersion == "2" },
            "\(alerts.map { ($0.path, $0.violations) })")
        let apns = try #require(alerts.first { $0.kind == .apns })
        #expect(apns.token == RingdPushRig.alertToken)
        #expect(apns.headers["apns-topic"] == RingdPushRig.bundleId)
        #expect(apns.headers["apns-priority"] == "10")
        #expect(apns.headers["apns-collapse-id"] == call.sessionId)
        let aps = apns.body?["aps"]
        #expect(aps?["alert"]?["loc-key"] == .string("RINGD_MISSED_CALL"))
        #expect(aps?["alert"]?["loc-args"] == .array([.string("alice")]))
        #expect(aps?["alert"]?["body"] == .string("Missed call from alice"))
        #expect(aps?["sound"] == .string("default"))
        #expect(apns.body?["sessionId"] == .string(call.sessionId))
        #expect(apns.body?["callerUid"] == .string("alice"))
        let fcm = try #require(alerts.first { $0.kind == .fcm })
        #expect(fcm.token == RingdPushRig.pixelToken)
        #expect(fcm.body?["message"]?["notification"]?["body"] == .string("Missed call from alice"))
        #expect(fcm.body?["message"]?["android"]?["notification"]?["tag"] == .string(call.sessionId))
        #expect(
            try rig.requests(for: RingdPushRig.ipadToken).map { $0.headers["apns-push-type"] } == ["voip"],
            "the iPad was rung and not alerted")

        let counted = waitUntil(timeout: 10) {
            (try? h.rest("GET", "/v1/push").json)??["alertOutcomes"]?["sent"]?.integerValue == 2
        }
        let overview = try h.rest("GET", "/v1/push").json
        #expect(counted, "\(String(describing: overview))")
        #expect(overview?["missedCallAlerts"] == .bool(true))
        let metrics = try h.rest("GET", "/metrics").response.bodyText
        #expect(metrics.contains(#"ringd_push_missed_call_alerts_total{outcome="sent"} 2"#), "\(metrics)")
    }

    @Test func aCallTheCalleeAnsweredOrDeclinedAlertsNoOne() throws {
        let rig = try RingdPushRig()
        defer { rig.finish() }
        let h = rig.harness
        try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try h.device("alice", "a1")
        let bob = try h.device("bob", "b2")
        // Each ring reaches FCM before the call stops ringing (a ring still
        // owed when it stops is dropped, and then no cancel or alert is owed).
        func fcmRequests(_ count: Int) throws {
            _ = try rig.mock.waitForRequests(count: count, kind: .fcm, timeout: 15)
        }
        let answered = try alice.initiate(to: "bob").call()
        try fcmRequests(1)
        #expect(try bob.accept(answered.sessionId).ok)
        try fcmRequests(2)
        #expect(try alice.end(answered.sessionId).ok)
        let declined = try alice.initiate(to: "bob").call()
        try fcmRequests(3)
        #expect(try bob.reject(declined.sessionId).ok)
        try fcmRequests(4)
        // A missed call after them: its alert comes after any they had caused.
        let missed = try alice.initiate(to: "bob").call()
        try fcmRequests(5)
        #expect(try alice.cancel(missed.sessionId).ok)
        let alerts = try Self.waitForAlerts(rig, count: 1)
        #expect(
            alerts.map { $0.body?["message"]?["data"]?["sessionId"]?.stringValue } == [missed.sessionId],
            "only the missed call alerts")
        #expect(try rig.mock.requests.filter { $0.kind == .fcm }.count >= 7, "three rings, three cancels, one alert")
    }

    @Test func aDeadAlertTokenIsForgottenAndTheVoIPTokenStays() throws {
        let rig = try RingdPushRig(script: [
            RingdPushRig.alertToken: [MockPushAnswer(status: 410, reason: "Unregistered")]
        ])
        defer { rig.finish() }
        let h = rig.harness
        try rig.register("bob", "iphone", .apnsVoip, RingdPushRig.iphoneToken, alertToken: RingdPushRig.alertToken)
        let alice = try h.device("alice", "a1")
        let call = try alice.initiate(to: "bob").call()
        _ = try rig.mock.waitForRequests(count: 1, kind: .apns)
        #expect(try alice.cancel(call.sessionId).ok)
        let token = { (try? h.rest("GET", "/v1/users/bob/devices/iphone/push-token").json?["pushToken"]) ?? nil }
        #expect(
            waitUntil(timeout: 10) { token()?["token"] != nil && token()?["alertToken"] == nil },
            "\(String(describing: token()))")
        #expect(try rig.requests(for: RingdPushRig.alertToken).map(\.status) == [410])
        #expect(token()?["token"]?.stringValue == RingdPushRig.iphoneToken, "the VoIP token still rings")
        rig.waitForOutcome("bob", "iphone", .purged)
    }

    /// The profile names the caller in the ring and the alert; what the
    /// caller wrote in the call's metadata does not.
    @Test func theCallersProfileNamesThem() throws {
        let rig = try RingdPushRig()
        defer { rig.finish() }
        let h = rig.harness
        let avatar = "https://cdn.example/alice.png"
        let profile = try h.rest(
            "PUT", "/v1/users/alice", body: #"{"name":"Alice Liddell","avatarUrl":"\#(avatar)"}"#)
        #expect(profile.status == 200, "\(profile)")
        try rig.register("bob", "iphone", .apnsVoip, RingdPushRig.iphoneToken, alertToken: RingdPushRig.alertToken)
        try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try h.device("alice", "a1")
        let metadata: JSONValue = .object([("callerName", .string("Your Bank"))])
        let call = try alice.initiate(to: "bob", metadata: metadata).call()
        let voip = try #require(try rig.mock.waitForRequests(count: 1, kind: .apns).first)
        #expect(voip.body?["callerName"] == .string("Alice Liddell"))
        #expect(voip.body?["callerAvatarUrl"] == .string(avatar))
        let ring = try #require(try rig.mock.waitForRequests(count: 1, kind: .fcm).first)
        #expect(ring.body?["message"]?["data"]?["callerName"] == .string("Alice Liddell"))
        #expect(ring.body?["message"]?["data"]?["callerAvatarUrl"] == .string(avatar))
        #expect(try alice.cancel(call.sessionId).ok)
        let alerts = try Self.waitForAlerts(rig, count: 2)
        let apns = try #require(alerts.first { $0.kind == .apns })
        #expect(apns.body?["aps"]?["alert"]?["body"] == .string("Missed call from Alice Liddell"))
        #expect(apns.body?["aps"]?["alert"]?["loc-args"] == .array([.string("Alice Liddell")]))
        let fcm = try #require(alerts.first { $0.kind == .fcm })
        #expect(fcm.body?["message"]?["notification"]?["body"] == .string("Missed call from Alice Liddell"))
        #expect(alerts.allSatisfy { $0.violations.isEmpty }, "\(alerts.map(\.violations))")
    }

    @Test func theCallersMetadataNamesThemOnlyWhenTrusted() throws {
        let rig = try RingdPushRig { $0.trustCallerMetadata = true }
        defer { rig.finish() }
        try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try rig.harness.device("alice", "a1")
        let metadata: JSONValue = .object([("callerName", .string("Alice Liddell"))])
        let call = try alice.initiate(to: "bob", metadata: metadata).call()
        let ring = try #require(try rig.mock.waitForRequests(count: 1, kind: .fcm).first)
        #expect(ring.body?["message"]?["data"]?["callerName"] == .string("Alice Liddell"))
        #expect(try alice.cancel(call.sessionId).ok)
        let alert = try #require(try Self.waitForAlerts(rig, count: 1).first)
        #expect(alert.body?["message"]?["notification"]?["body"] == .string("Missed call from Alice Liddell"))
        #expect(alert.body?["message"]?["data"]?["callerName"] == .string("Alice Liddell"))
    }

    @Test func alertsCanBeTurnedOff() throws {
        let rig = try RingdPushRig { $0.missedCallAlerts = false }
        defer { rig.finish() }
        try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try rig.harness.device("alice", "a1")
        let call = try alice.initiate(to: "bob").call()
        _ = try rig.mock.waitForRequests(count: 1, kind: .fcm)
        #expect(try alice.cancel(call.sessionId).ok)
        // The cancel leaves with the alert, were there one.
        _ = try rig.mock.waitForRequests(count: 2, kind: .fcm)
        rig.waitForOutcome("bob", "pixel", .sent)
        #expect(try Self.alerts(rig).isEmpty)
        #expect(try rig.harness.rest("GET", "/v1/push").json?["missedCallAlerts"] == .bool(false))
    }
}
