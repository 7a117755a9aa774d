import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// ringd's signatures verified by an implementation that is not ringd's:
/// the Standard Webhooks library from PyPI, in the virtual environment
/// `make venv` makes (and `make test` runs first), driven by
/// Tests/Webhooks/verify_standard_webhooks.py.
@Suite(.blocking) struct WebhookStandardLibraryTests {

    /// The bodies verified.
    enum Body: String, CaseIterable, CustomTestStringConvertible {
        /// ``WebhookExample``.
        case example
        /// An ended call whose body needs escapes and multi-byte UTF-8: a
        /// receiver must verify the bytes, not a re-encoding of them.
        case escapesAndUnicode

        var change: CallChange {
            guard self == .escapesAndUnicode else { return WebhookExample.accepted }
            var ongoing = WebhookExample.accepted.after
            ongoing.initiator = "zoë"
            ongoing.metadata = .object([("note", .string("\"quoted\", tab\t, new\nline, 📞 ünïcödé"))])
            var ended = ongoing
            ended.status = .ended
            ended.endedAt = 1_700_000_060_000
            ended.endedBy = "zoë"
            ended.endReason = .hangup
            ended.seq = 43
            return CallChange(
                before: ongoing, after: ended, transition: .hangUp, actor: .device(uid: "zoë", deviceId: "z1"))
        }

        var testDescription: String { rawValue }
    }

    @Test(arguments: Body.allCases)
    func theStandardWebhooksLibraryVerifiesEachSecret(body: Body) throws {
        let secrets = [WebhookExample.firstSecret, WebhookExample.secondSecret]
        let event = try WebhookEvent(change: body.change)
        // The library refuses a timestamp more than five minutes from its clock.
        let headers = try WebhookSignature(secrets: secrets)
            .headers(for: event, timestamp: Int64(Date().timeIntervalSince1970))
        try Self.expectVerified(body: event.body, headers: headers.fields.map { ($0.name, $0.value) }, secrets: secrets)
    }

    /// Runs the script on `body` as signed by `headers` with `secrets` (two)
    /// and expects every check of it to pass.
    static func expectVerified(
        body: [UInt8], headers: [(String, String)], secrets: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try PythonCheck.expect(
            "Tests/Webhooks/verify_standard_webhooks.py",
            input: .object([
                ("body", .string(Base64.encode(body))),
                ("headers", .object(headers.map { ($0.0, .string($0.1)) })),
                ("secrets", .array(secrets.map(JSONValue.string))),
            ]),
            prints: [
                "ok webhook-signature verifies with secret 1",
                "ok a changed body is refused with secret 1",
                "ok webhook-signature verifies with secret 2",
                "ok a changed body is refused with secret 2",
                "ok a secret that was not used is refused",
                "ok X-CometChat-Signature is the hex HMAC of the body with secret 1",
            ], needing: "the Standard Webhooks library this test verifies with", sourceLocation: sourceLocation)
    }
}
