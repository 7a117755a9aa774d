import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// Who a push says is calling (``PushCaller``), and the missed-call
/// alerts' requests as docs/PUSH.md shows them.
struct MissedCallAlertPayloadTests {
    static let voip = String(repeating: "a1", count: 32)
    static let alert = String(repeating: "c3", count: 32)

    static var call: Call {
        var call = PushAnswerTests.call
        call.status = .unanswered
        call.metadata = .object([("callerName", .string("Alice Liddell"))])
        return call
    }

    static func iphone(topic: String? = nil, alertToken: String? = alert) throws -> RegisteredPushToken {
        RegisteredPushToken(
            uid: "bob", deviceId: "iphone",
            registration: try PushRegistration(
                platform: .apnsVoip, token: voip, topic: topic, alertToken: alertToken),
            updatedAt: 0)
    }

    static var settings: PushSettings {
        var settings = PushSettings()
        settings.apns.bundleId = "com.example.app"
        settings.apns.productionURL = "https://apns.test"
        return settings
    }

    @Test func theCallersOwnMetadataNamesThemOnlyWhenTrusted() {
        var settings = PushSettings()
        let untrusted = PushCaller(of: Self.call, settings: settings)
        #expect(untrusted.uid == "alice" && untrusted.name == nil && untrusted.avatarURL == nil)
        #expect(PushCaller(of: Self.call, settings: settings).displayName == "alice")
        settings.trustCallerMetadata = true
        #expect(PushCaller(of: Self.call, settings: settings).displayName == "Alice Liddell")
        var blank = Self.call
        blank.metadata = .object([("callerName", .string(" \n\t "))])
        #expect(PushCaller(of: blank, settings: settings).name == nil, "a blank name is no name")
    }

    @Test func theCallersProfileNamesThemAndTrustedMetadataComesFirst() throws {
        var call = Self.call
        call.metadata = .object([("callerName", .string("Your Bank"))])
        call.initiatorName = "Alice Liddell"
        call.initiatorAvatarUrl = "https://cdn.example/alice.png"
        var settings = PushSettings()
        let caller = PushCaller(of: call, settings: settings)
        #expect(caller.name == "Alice Liddell" && caller.avatarURL == "https://cdn.example/alice.png")
        let ring = try JSONValue.parse(APNsPush.payload(for: call, caller: caller))
        #expect(ring["callerName"] == .string("Alice Liddell"))
        #expect(ring["callerAvatarUrl"] == .string("https://cdn.example/alice.png"))
        let fcm = try JSONValue.parse(FCMPush.message(.incomingCall, for: call, token: "t", settings: settings, now: 0))
        #expect(fcm["message"]?["data"]?["callerAvatarUrl"] == .string("https://cdn.example/alice.png"))
        settings.trustCallerMetadata = true
        #expect(PushCaller(of: call, settings: settings).name == "Your Bank", "trusted, the call's own label")
    }

    @Test func aNameLosesControlCharactersAndIsCutAndAnAvatarURLFitsOrIsLeftOut() {
        #expect(PushCaller.cleanName("  Alice\u{0}\nLiddell\u{7F} ") == "Alice  Liddell")
        #expect(PushCaller.cleanName(String(repeating: "é", count: 300))?.unicodeScalars.count == 256)
        #expect(PushCaller.cleanAvatarURL("https://cdn.example/a.png") == "https://cdn.example/a.png")
        for bad in ["", "https://cdn.example/a b.png", "https://cdn.example/\u{E9}.png", #"https://x/"y""#] {
            #expect(PushCaller.cleanAvatarURL(bad) == nil, "\(bad)")
        }
        #expect(PushCaller.cleanAvatarURL(String(repeating: "a", count: PushCaller.maxAvatarURLBytes + 1)) == nil)
    }

    @Test func theAPNsAlertGoesToTheAlertTokenOnTheAppsTopic() throws {
        var settings = Self.settings
        settings.trustCallerMetadata = true
        let request = try #require(
            APNsPush.alertRequest(
                for: Self.call, token: try Self.iphone(), settings: settings, jwt: "jwt", now: 1_764_466_900_000))
        #expect(request.url == "https://apns.test/3/device/\(Self.alert)")
        let headers = Dictionary(request.headers, uniquingKeysWith: { first, _ in first })
        #expect(headers["apns-push-type"] == "alert")
        #expect(headers["apns-topic"] == "com.example.app")
        #expect(headers["apns-priority"] == "10")
        #expect(headers["apns-collapse-id"] == Self.call.sessionId)
        #expect(headers["apns-expiration"] == String(1_764_466_900 + 86_400))
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == #"{"aps":{"alert":{"title":"Missed call","body":"Missed call from Alice Liddell","title-loc-key":"RINGD_MISSED_CALL_TITLE","loc-key":"RINGD_MISSED_CALL","loc-args":["Alice Liddell"]},"sound":"default"},"type":"missed_call","sessionId":"9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d","callerUid":"alice","callType":"video","callerName":"Alice Liddell"}"#
        )
        #expect(
            APNsPush.alertTopic(for: try Self.iphone(topic: "com.other.app.voip"), settings: settings)
                == "com.other.app")
        #expect(
            APNsPush.alertRequest(
                for: Self.call, token: try Self.iphone(alertToken: nil), settings: settings, jwt: "jwt", now: 0)
                == nil)
    }

    @Test func theFCMAlertIsANotificationTaggedWithTheSession() throws {
        let message = try JSONValue.parse(
            FCMPush.message(.missedCall, for: Self.call, token: "t", settings: PushSettings(), now: 0))["message"]
        #expect(message?["notification"]?["title"] == .string("Missed call"))
        #expect(message?["notification"]?["body"] == .string("Missed call from alice"), "the uid, untrusted")
        #expect(message?["data"]?["type"] == .string("missed_call"))
        #expect(message?["data"]?["sessionId"] == .string(Self.call.sessionId))
        #expect(message?["data"]?["callerName"] == nil)
        let android = message?["android"]
        #expect(android?["ttl"] == .string("86400s"))
        #expect(android?["notification"]?["tag"] == .string(Self.call.sessionId))
        #expect(android?["notification"]?["body_loc_key"] == .string("ringd_missed_call"))
        #expect(android?["notification"]?["body_loc_args"] == .array([.string("alice")]))
    }

    /// docs/PUSH.md shows both services' alerts as the code makes them.
    @Test func theDocumentedAlertsAreTheOnesSent() throws {
        let document = try String(contentsOfFile: Repository.root() + "/docs/PUSH.md", encoding: .utf8)
        var settings = Self.settings
        settings.trustCallerMetadata = true
        let apns = try #require(
            APNsPush.alertRequest(for: Self.call, token: try Self.iphone(), settings: settings, jwt: "j", now: 0))
        let fcm = FCMPush.message(
            .missedCall, for: Self.call, token: "dQw4w9WgXcQ:APA91b…", settings: settings, now: 0)
        for body in [apns.body, fcm] {
            let text = String(decoding: body, as: UTF8.self)
            #expect(document.contains("\n" + text + "\n"), "docs/PUSH.md lacks \(text)")
        }
    }

    @Test func theWorstCaseAlertsStayUnderTheLimits() throws {
        var call = Self.call
        call.initiator = String(repeating: "@", count: 100)
        call.metadata = .object([("callerName", .string(String(repeating: "\u{1F600}", count: 5000)))])
        call.initiatorAvatarUrl = "https://" + String(repeating: "a", count: PushCaller.maxAvatarURLBytes - 8)
        var settings = Self.settings
        settings.trustCallerMetadata = true
        #expect(PushCaller(of: call, settings: settings).avatarURL != nil)
        let apns = try #require(
            APNsPush.alertRequest(for: call, token: try Self.iphone(), settings: settings, jwt: "jwt", now: 0))
        #expect(apns.body.count <= APNsPush.maxAlertPayloadBytes)
        // FCM's limit is 4,096 bytes of message, the token aside.
        let fcm = FCMPush.message(.missedCall, for: call, token: "", settings: settings, now: 0)
        #expect(fcm.count <= 4096, "\(fcm.count)")
        let ring = FCMPush.message(.incomingCall, for: call, token: "", settings: settings, now: 0)
        #expect(ring.count <= 4096, "\(ring.count)")
    }
}
