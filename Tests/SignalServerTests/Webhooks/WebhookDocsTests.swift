import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// docs/WEBHOOKS.md shows, for every trigger, the body ringd sends for one
/// change of a short day of calls, and the headers of the example; these
/// tests keep the document and the code in step.
@Suite struct WebhookDocsTests {
    static let document = Repository.root() + "/docs/WEBHOOKS.md"

    /// alice and bob's calls, one change for each trigger, in the order of
    /// their positions (41 to 50; the changes not shown took the others).
    static func changes() throws -> [CallChange] {
        let start: Int64 = 1_700_000_000_000
        let alice = CallActor.device(uid: "alice", deviceId: "alice-laptop")
        let bob = CallActor.device(uid: "bob", deviceId: "bob-phone")
        var changes: [CallChange] = []
        func change(
            _ transition: CallTransition, of call: Call, by actor: CallActor, at time: Int64,
            seq: Int64
        ) throws -> Call {
            var next = try call.applying(transition, by: actor, at: time)
            next.seq = seq
            changes.append(CallChange(before: call, after: next, transition: transition, actor: actor))
            return next
        }
        func place(
            _ sessionId: String, from caller: String, to callee: String, _ type: CallType, timeout: Int = 45,
            metadata: JSONValue? = nil, busy: Bool = false, at time: Int64, seq: Int64
        ) -> Call {
            var call = Call.placed(
                sessionId: sessionId, from: caller, device: caller + "-laptop", to: callee, callType: type,
                timeoutMs: Int64(timeout) * 1000,
                metadata: metadata, receiverBusy: busy, at: time)
            call.seq = seq
            changes.append(.created(call, by: .device(uid: caller, deviceId: caller + "-laptop")))
            return call
        }

        let standup = place(
            WebhookExample.sessionId, from: "alice", to: "bob", .video,
            metadata: .object([("topic", .string("standup"))]), at: start, seq: 41)
        let started = try change(.accept(deviceId: "bob-phone"), of: standup, by: bob, at: start + 4_000, seq: 42)
        _ = place(
            "5d81a3c2e4f64b0a9c7e1f2d3b4a5c6d", from: "carol", to: "bob", .audio, busy: true,
            at: start + 30_000, seq: 43)
        _ = try change(.hangUp, of: started, by: alice, at: start + 64_000, seq: 44)
        let declined = place(
            "2b7e151628ae4d2aabf7158809cf4f3c", from: "alice", to: "bob", .audio,
            at: start + 100_000, seq: 45)
        _ = try change(.reject(busy: false), of: declined, by: bob, at: start + 103_000, seq: 46)
        let cancelled = place(
            "7c3a9e1f5b2d4e6a8f0c1b3d5e7a9c2f", from: "alice", to: "bob", .video,
            at: start + 200_000, seq: 47)
        _ = try change(.cancel, of: cancelled, by: alice, at: start + 205_000, seq: 48)
        let missed = place(
            "e4d909c290d04fb8a1c2d3e4f5a6b7c8", from: "bob", to: "alice", .audio, timeout: 30,
            at: start + 300_000, seq: 49)
        _ = try change(.timeOut, of: missed, by: .server, at: start + 330_000, seq: 50)
        return changes
    }

    /// The JSON of the first ```json block after the heading "### `trigger`".
    static func documentedBody(of trigger: WebhookTrigger, in text: String) -> String? {
        guard let heading = text.range(of: "\n### `\(trigger.rawValue)`\n"),
            let open = text.range(of: "```json\n", range: heading.upperBound ..< text.endIndex),
            let close = text.range(of: "\n```", range: open.upperBound ..< text.endIndex)
        else { return nil }
        return String(text[open.upperBound ..< close.lowerBound])
    }

    @Test func everyTriggerHasItsExampleBody() throws {
        let text = try String(contentsOfFile: Self.document, encoding: .utf8)
        let events = try Self.changes().map { change throws(WebhookError) in try WebhookEvent(change: change) }
        #expect(Set(events.map(\.trigger)) == Set(WebhookTrigger.allCases))
        for trigger in WebhookTrigger.allCases {
            let event = try #require(events.first { $0.trigger == trigger })
            let documented = try #require(
                Self.documentedBody(of: trigger, in: text),
                "docs/WEBHOOKS.md has no ```json block under ### `\(trigger.rawValue)`")
            let matches = try JSONValue.parse(documented) == JSONValue.parse(event.body)
            #expect(
                matches,
                "docs/WEBHOOKS.md, \(trigger.rawValue): ringd sends \(String(decoding: event.body, as: UTF8.self))")
        }
    }

    /// The headers shown are the example's, signed with both example secrets.
    @Test func theHeadersShownAreTheExamples() throws {
        let text = try String(contentsOfFile: Self.document, encoding: .utf8)
        let event = try WebhookEvent(change: WebhookExample.accepted)
        let headers = try WebhookSignature(secrets: [WebhookExample.firstSecret, WebhookExample.secondSecret])
            .headers(for: event, timestamp: WebhookExample.timestamp)
        for (name, value) in headers.fields {
            let shown = text.contains("\n\(name): \(value)\n")
            #expect(shown, "docs/WEBHOOKS.md lacks the line \(name): \(value)")
        }
        for secret in [WebhookExample.firstSecret, WebhookExample.secondSecret] {
            let shown = text.contains(secret)
            #expect(shown, "docs/WEBHOOKS.md does not name the secret \(secret)")
        }
    }
}
