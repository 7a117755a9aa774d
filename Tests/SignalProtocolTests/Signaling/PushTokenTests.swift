import SignalProtocol
import Testing

/// What a push token must look like, and the results that carry one.
struct PushTokenTests {
    static let apnsToken = String(repeating: "a1", count: 32)

    @Test func anAPNsTokenIsKeptLowerCase() throws {
        let registration = try PushRegistration(platform: .apnsVoip, token: Self.apnsToken.uppercased())
        #expect(registration.token == Self.apnsToken)
    }

    @Test(arguments: [
        ("apns-voip", "abc", "hex digits"),
        ("apns-voip", String(repeating: "zz", count: 32), "hex digits"),
        ("apns-voip", String(repeating: "a", count: 65), "hex digits"),
        ("apns-voip", String(repeating: "ab", count: 101), "hex digits"),
        ("fcm", "short", "fcm token"),
        ("fcm", String(repeating: "x", count: 40) + " y", "fcm token"),
        ("fcm", String(repeating: "x", count: 4097), "fcm token"),
        ("webpush", String(repeating: "x", count: 40), "platform"),
    ])
    func aBadTokenIsRefused(_ platform: String, _ token: String, _ named: String) {
        let frame = #"{"type":"registerPushToken","id":"p1","platform":"\#(platform)","token":"\#(token)"}"#
        do {
            _ = try ClientFrame.parse(Array(frame.utf8))
            Issue.record("accepted \(platform) \(token)")
        } catch {
            #expect(error.id == "p1")
            #expect(error.error.code == .validation)
            #expect(error.error.message.contains(named), "\(error.error.message)")
        }
    }

    @Test func topicAndEnvironmentAreForAPNsOnly() {
        #expect(throws: SignalError.self) {
            try PushRegistration(platform: .fcm, token: String(repeating: "x", count: 40), topic: "com.example.app")
        }
        #expect(throws: SignalError.self) {
            try PushRegistration(platform: .apnsVoip, token: Self.apnsToken, topic: "com example")
        }
    }

    @Test func anAlertTokenIsAnAPNsTokenBesideTheVoIPOne() throws {
        let alert = String(repeating: "C3", count: 32)
        let body = #"{"platform":"apns-voip","token":"\#(Self.apnsToken)","alertToken":"\#(alert)"}"#
        let registration = try PushRegistration(fields: JSONFields(try JSONValue.parse(Array(body.utf8))))
        #expect(registration.alertToken == alert.lowercased())
        #expect(registration.members.last?.key == "alertToken")
        #expect(throws: SignalError.self) {
            try PushRegistration(platform: .apnsVoip, token: Self.apnsToken, alertToken: "xyz")
        }
        do {
            _ = try PushRegistration(platform: .fcm, token: String(repeating: "x", count: 40), alertToken: alert)
            Issue.record("an fcm token took an alertToken")
        } catch {
            #expect(error.code == .validation && error.message.contains("alertToken"), "\(error.message)")
        }
    }

    @Test func resultsRoundTrip() throws {
        let token = RegisteredPushToken(
            uid: "bob", deviceId: "b-phone",
            registration: try PushRegistration(
                platform: .apnsVoip, token: Self.apnsToken,
                topic: "com.example.app", environment: .production, alertToken: String(repeating: "c3", count: 32)),
            updatedAt: 1_700_000_000_000)
        for (data, type) in [
            (ResultData.pushToken(token), RequestType.registerPushToken),
            (.pushTokenRemoved(true), .unregisterPushToken),
        ] {
            #expect(try ResultData(json: data.json, answering: type) == data)
        }
        #expect(ResultData.pushTokenRemoved(false).json.serialized == #"{"removed":false}"#)
    }
}
