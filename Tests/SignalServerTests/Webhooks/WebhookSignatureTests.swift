import SignalProtocol
import Testing

@testable import SignalServer

/// `WebhookSecret` and `WebhookSignature` against vectors computed outside
/// ringd (see ``WebhookExample``).
@Suite struct WebhookSignatureTests {
    @Test func signsTheExampleAsComputedIndependently() throws {
        let signature = try WebhookSignature(secrets: [WebhookExample.firstSecret])
        let event = try WebhookEvent(change: WebhookExample.accepted)
        let headers = try signature.headers(for: event, timestamp: WebhookExample.timestamp)
        #expect(headers.id == WebhookExample.eventId)
        #expect(headers.timestamp == WebhookExample.timestamp)
        #expect(headers.signature == WebhookExample.firstSignature)
        #expect(headers.cometChatSignature == WebhookExample.cometChatSignature)
        #expect(
            headers.fields.map(\.name) == [
                "webhook-id", "webhook-timestamp", "webhook-signature",
                "X-CometChat-Signature",
            ])
        #expect(
            headers.fields.map(\.value) == [
                WebhookExample.eventId, "1700000005", WebhookExample.firstSignature,
                WebhookExample.cometChatSignature,
            ])
    }

    /// The example the Standard Webhooks (and Svix) libraries test with.
    @Test func matchesTheStandardWebhooksLibrariesVector() throws {
        let signature = try WebhookSignature(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        let headers = try signature.headers(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330,
            body: Array(#"{"test": 2432232314}"#.utf8))
        #expect(headers.signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    /// Rotation: one signature per secret, in order; the CometChat one from the first.
    @Test func twoSecretsGiveTwoSignatures() throws {
        let signature = try WebhookSignature(secrets: [WebhookExample.firstSecret, WebhookExample.secondSecret])
        let event = try WebhookEvent(change: WebhookExample.accepted)
        let headers = try signature.headers(for: event, timestamp: WebhookExample.timestamp)
        #expect(headers.signature == WebhookExample.firstSignature + " " + WebhookExample.secondSignature)
        #expect(headers.cometChatSignature == WebhookExample.cometChatSignature)
        let reversed = try WebhookSignature(secrets: [WebhookExample.secondSecret, WebhookExample.firstSecret])
        #expect(
            try reversed.headers(for: event, timestamp: WebhookExample.timestamp).signature
                == WebhookExample.secondSignature + " " + WebhookExample.firstSignature)
    }

    /// Another attempt signs the same id and body with its own timestamp.
    @Test func anotherTimestampChangesOnlyTheStandardSignature() throws {
        let signature = try WebhookSignature(secrets: [WebhookExample.firstSecret])
        let event = try WebhookEvent(change: WebhookExample.accepted)
        let first = try signature.headers(for: event, timestamp: WebhookExample.timestamp)
        let retry = try signature.headers(for: event, timestamp: WebhookExample.timestamp + 30)
        #expect(retry.id == first.id)
        #expect(retry.signature != first.signature)
        #expect(retry.cometChatSignature == first.cometChatSignature)
    }

    @Test func unpaddedBase64IsTheSameKey() throws {
        let padded = try WebhookSecret(WebhookExample.secondSecret)
        let unpadded = try WebhookSecret(String(WebhookExample.secondSecret.dropLast()))
        #expect(padded.key == unpadded.key)
        #expect(padded.key == Array(0 ..< 32))
    }

    @Test(arguments: [
        ("", "must start with whsec_"),
        ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "must start with whsec_"),
        ("WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "must start with whsec_"),
        ("whsec_", "must encode 24 to 64 bytes; this one encodes 0"),
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS", "followed by base64"),
        ("whsec_MfKQ9r8GKYqrTwjU-D8ILPZIo2LaLaSw", "followed by base64"),
        ("whsec_MfKQ9r8GKYqrTwjU PD8ILPZIo2LaLaSw", "followed by base64"),
        (" whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "must start with whsec_"),
        ("whsec_c2hvcnQtc2VjcmV0", "must encode 24 to 64 bytes; this one encodes 12"),
        ("whsec_" + String(repeating: "QUFB", count: 22), "must encode 24 to 64 bytes; this one encodes 66"),
    ])
    func aBadSecretIsRefusedWithoutEchoingIt(secret: String, reason: String) {
        do {
            _ = try WebhookSecret(secret)
            Issue.record("accepted a bad secret")
        } catch {
            #expect(error.code == .badSecret)
            #expect(error.message.contains(reason))
            let body = String(secret.dropFirst(secret.hasPrefix("whsec_") ? 6 : 0))
            for text in [error.message, error.description] where body.count >= 4 {
                #expect(!text.contains(body), "the error repeats the secret")
                #expect(!text.contains(body.prefix(8)), "the error repeats part of the secret")
            }
        }
    }

    @Test func anEndpointNeedsASecret() {
        #expect { try WebhookSignature(secrets: [String]()) } throws: { ($0 as? WebhookError)?.code == .noSecret }
    }

    /// Its description, debug description and mirror hold no part of it.
    @Test func aSecretNeverPrints() throws {
        let secret = try WebhookSecret(WebhookExample.firstSecret)
        var dumped = ""
        dump(secret, to: &dumped)
        let signature = try WebhookSignature(secrets: [secret])
        var dumpedSignature = ""
        dump(signature, to: &dumpedSignature)
        for text in ["\(secret)", String(reflecting: secret), dumped, "\(signature)", dumpedSignature] {
            #expect(!text.contains("MfKQ9r8G"), "\(text)")
        }
    }
}
