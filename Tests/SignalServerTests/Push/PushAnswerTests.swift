import SignalCrypto
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// What APNs' and FCM's answers mean, the payloads, and the provider token's
/// reuse rules; no network.
struct PushAnswerTests {
    static func response(
        _ status: Int?, _ body: String = "", retryAfter: Double? = nil,
        error: OutboundError? = nil
    ) -> OutboundResponse {
        OutboundResponse(status: status, error: error, elapsed: 0, body: Array(body.utf8), retryAfter: retryAfter)
    }

    static func fcmError(_ status: Int, _ code: String, _ message: String = "") -> String {
        #"{"error":{"code":\#(status),"message":"\#(message)","status":"X","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(code)"}]}}"#
    }

    @Test func apnsAnswers() {
        #expect(APNsPush.answer(Self.response(200)) == .sent)
        #expect(
            APNsPush.answer(Self.response(410, #"{"reason":"Unregistered","timestamp":1}"#)) == .purge("Unregistered"))
        #expect(APNsPush.answer(Self.response(400, #"{"reason":"BadDeviceToken"}"#)) == .purge("BadDeviceToken"))
        #expect(
            APNsPush.answer(Self.response(400, #"{"reason":"DeviceTokenNotForTopic"}"#))
                == .purge("DeviceTokenNotForTopic"))
        #expect(APNsPush.answer(Self.response(400, #"{"reason":"BadTopic"}"#)) == .failed("400 BadTopic"))
        #expect(
            APNsPush.answer(Self.response(403, #"{"reason":"ExpiredProviderToken"}"#))
                == .renewCredentials("ExpiredProviderToken"))
        #expect(
            APNsPush.answer(Self.response(403, #"{"reason":"InvalidProviderToken"}"#))
                == .renewCredentials("InvalidProviderToken"))
        #expect(
            APNsPush.answer(Self.response(429, #"{"reason":"TooManyRequests"}"#, retryAfter: 3))
                == .retry("429 TooManyRequests", after: 3))
        #expect(APNsPush.answer(Self.response(503, "not json")) == .retry("503 HTTP 503", after: nil))
        #expect(
            APNsPush.answer(Self.response(nil, error: OutboundError(.connect, "refused"))) == .retry("CONNECT: refused")
        )
    }

    @Test func fcmAnswers() {
        #expect(FCMPush.answer(Self.response(200, #"{"name":"projects/p/messages/1"}"#)) == .sent)
        #expect(FCMPush.answer(Self.response(404, Self.fcmError(404, "UNREGISTERED"))) == .purge("UNREGISTERED"))
        #expect(
            FCMPush.answer(
                Self.response(
                    400,
                    Self.fcmError(
                        400, "INVALID_ARGUMENT",
                        "The registration token is not a valid FCM registration token")))
                == .purge("INVALID_ARGUMENT: The registration token is not a valid FCM registration token"))
        #expect(
            FCMPush.answer(Self.response(400, Self.fcmError(400, "INVALID_ARGUMENT", "Invalid JSON payload")))
                == .failed("400 INVALID_ARGUMENT: Invalid JSON payload"))
        #expect(
            FCMPush.answer(Self.response(403, Self.fcmError(403, "SENDER_ID_MISMATCH")))
                == .failed("403 SENDER_ID_MISMATCH"))
        #expect(
            FCMPush.answer(Self.response(404, #"{"error":{"code":404,"status":"NOT_FOUND"}}"#))
                == .failed("404 NOT_FOUND"))
        #expect(FCMPush.answer(Self.response(200, "", error: OutboundError(.other, "cut short"))) == .sent)
        #expect(
            FCMPush.answer(Self.response(401, #"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#))
                == .renewCredentials("UNAUTHENTICATED"))
        #expect(
            FCMPush.answer(Self.response(429, Self.fcmError(429, "QUOTA_EXCEEDED"), retryAfter: 10))
                == .retry("429 QUOTA_EXCEEDED", after: 10))
        #expect(FCMPush.answer(Self.response(503, "")) == .retry("503 HTTP 503", after: nil))
    }

    static let call = Call(
        sessionId: "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d", callType: .video, status: .initiated,
        initiator: "alice", receiver: "bob", initiatedAt: 1_764_466_800_000, timeoutMs: 30_000)

    static var trusting: PushSettings {
        var settings = PushSettings()
        settings.trustCallerMetadata = true
        return settings
    }

    @Test func theAPNsPayloadIsTheDocumentedOneAndANameIsCut() throws {
        var call = Self.call
        call.metadata = .object([("callerName", .string("Alice Liddell"))])
        let caller = { PushCaller(of: call, settings: Self.trusting) }
        #expect(
            String(decoding: APNsPush.payload(for: call, caller: caller()), as: UTF8.self)
                == #"{"aps":{},"sessionId":"9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d","callerUid":"alice","callType":"video","initiatedAt":1764466800000,"ringTimeout":30,"callerName":"Alice Liddell"}"#
        )
        call.metadata = .object([("callerName", .string(String(repeating: "x", count: 5200)))])
        #expect(
            try JSONValue.parse(APNsPush.payload(for: call, caller: caller()))["callerName"]?.stringValue?.count
                == PushCaller.maxNameScalars)
        // The worst case: the longest uid, a name of the longest UTF-8
        // characters, the longest avatar URL.
        call.initiator = String(repeating: "@", count: 100)
        call.metadata = .object([("callerName", .string(String(repeating: "\u{1F600}", count: 5000)))])
        var worst = caller()
        worst.avatarURL = PushCaller.cleanAvatarURL(String(repeating: "a", count: PushCaller.maxAvatarURLBytes))
        #expect(worst.avatarURL != nil)
        #expect(APNsPush.payload(for: call, caller: worst).count <= APNsPush.maxPayloadBytes)
    }

    @Test func theFCMMessageCarriesStringsAndLivesAsLongAsTheCallRings() throws {
        let ring = try JSONValue.parse(
            FCMPush.message(
                .incomingCall, for: Self.call, token: "t", settings: PushSettings(),
                now: Self.call.initiatedAt + 1_500))
        #expect(ring["message"]?["android"]?["ttl"]?.stringValue == "29s")
        #expect(ring["message"]?["data"]?["ringTimeout"] == .string("30"))
        #expect(ring["message"]?["data"]?["initiatedAt"] == .string("1764466800000"))
        var stopped = Self.call
        stopped.status = .ongoing
        let cancel = try JSONValue.parse(
            FCMPush.message(.callCancelled, for: stopped, token: "t", settings: PushSettings(), now: 0))
        #expect(cancel["message"]?["notification"] == nil, "a data message: Android shows nothing by itself")
        #expect(cancel["message"]?["data"]?["type"] == .string("call_cancelled"))
        #expect(cancel["message"]?["data"]?["status"] == .string("ongoing"))
    }

    @Test func theProviderTokenIsReusedForFiftyMinutesAndRenewedOnceWhenRefused() throws {
        let directory = try TemporaryDirectory(prefix: "ringd-apns-key")
        defer { directory.remove() }
        let path = try directory.writeSecret(try SigningKey.generate(.es256), named: "AuthKey.p8")
        var settings = APNsSettings()
        settings.keyFile = path
        settings.keyId = "ABC123DEFG"
        settings.teamId = "DEF123GHIJ"
        let provider = try APNsProviderToken(settings: settings)
        let first = try provider.jwt(now: 1_000)
        #expect(try provider.jwt(now: 1_000 + 49 * 60) == first)
        let renewed = try provider.jwt(now: 1_000 + 50 * 60)
        #expect(renewed != first)
        let key = try SigningKey(contentsOfFile: path)
        let decoded = try #require(JSONWebToken.decode(renewed))
        #expect(decoded.header["alg"] == .string("ES256") && decoded.header["kid"] == .string("ABC123DEFG"))
        #expect(decoded.claims["iss"] == .string("DEF123GHIJ") && decoded.claims["iat"] == .integer(4_000))
        #expect(key.verify(decoded.signature, of: decoded.signingInput))
        let replacement = try provider.renew(refused: renewed, now: 4_000)
        #expect(replacement != renewed, "a refused token is replaced, even within the same second")
        #expect(try provider.renew(refused: renewed, now: 4_000) == replacement, "once, however many pushes carried it")
    }

    @Test func anUnusableKeyStopsTheStartNamingTheSetting() throws {
        var settings = APNsSettings()
        settings.keyFile = "/nonexistent/AuthKey.p8"
        settings.keyId = "ABC123DEFG"
        settings.teamId = "DEF123GHIJ"
        #expect { try APNsProviderToken(settings: settings) } throws: { error in
            (error as? PushError)?.code == .configuration && "\(error)".contains("push.apns.keyFile")
        }
    }
}
