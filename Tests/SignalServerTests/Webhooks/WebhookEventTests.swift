import SignalProtocol
import Testing

@testable import SignalServer

/// `WebhookEvent(change:)`: the id, the time and the body bytes.
@Suite struct WebhookEventTests {
    @Test func theBodyIsTheDocumentedJSONByteForByte() throws {
        let event = try WebhookEvent(change: WebhookExample.accepted)
        #expect(String(decoding: event.body, as: UTF8.self) == WebhookExample.body)
        #expect(event.body == Array(WebhookExample.body.utf8))
        #expect(event.id == WebhookExample.eventId)
        #expect(event.trigger == .callStarted)
        #expect(event.sessionId == WebhookExample.sessionId)
        #expect(event.seq == 42)
        #expect(event.createdAt == 1_700_000_004_000)
    }

    /// `data.call` is exactly the call as the WebSocket sends it.
    @Test func dataCallIsTheWireCall() throws {
        let change = WebhookExample.accepted
        let body = try JSONValue.parse(try WebhookEvent(change: change).body)
        #expect(body["data"]?["call"] == change.after.json)
    }

    /// The same change always makes the same event; another change of the
    /// same call, or the same position in another store's call, another id.
    @Test func idsAreStableAndUnique() throws {
        let change = WebhookExample.accepted
        #expect(try WebhookEvent(change: change) == WebhookEvent(change: change))
        let ended = try change.after.applying(.hangUp, by: .device(uid: "alice", deviceId: "a1"), at: 1_700_000_009_000)
        var endedChange = CallChange(
            before: change.after, after: ended, transition: .hangUp,
            actor: .device(uid: "alice", deviceId: "a1"))
        endedChange.after.seq = 43
        let endedEvent = try WebhookEvent(change: endedChange)
        #expect(endedEvent.id == "evt_9f2ce0b4a1d34c6e8b7f5a2c1d0e3f4a_43")
        #expect(endedEvent.trigger == .callEnded)
        var otherCall = change
        otherCall.after.sessionId = "0123456789abcdef0123456789abcdef"
        #expect(try WebhookEvent(change: otherCall).id == "evt_0123456789abcdef0123456789abcdef_42")
    }

    /// `createdAt` is when the change happened: placed, accepted or ended.
    @Test func createdAtIsTheTimeOfTheChange() throws {
        let ringing = WebhookExample.ringing
        #expect(try WebhookEvent(change: .created(ringing, by: .server)).createdAt == 1_700_000_000_000)
        #expect(try WebhookEvent(change: WebhookExample.accepted).createdAt == 1_700_000_004_000)
        var unanswered = try ringing.applying(.timeOut, by: .server, at: 1_700_000_045_000)
        unanswered.seq = 42
        let event = try WebhookEvent(
            change: CallChange(
                before: ringing, after: unanswered, transition: .timeOut,
                actor: .server))
        #expect(event.trigger == .callUnanswered)
        #expect(event.createdAt == 1_700_000_045_000)
    }

    @Test func anUncommittedChangeIsRefused() {
        var change = WebhookExample.accepted
        change.after.seq = 0
        #expect { try WebhookEvent(change: change) } throws: { ($0 as? WebhookError)?.code == .uncommittedChange }
    }

    @Test func aChangeWithoutATriggerIsRefused() {
        var change = WebhookExample.accepted
        change.after.status = .initiated
        #expect { try WebhookEvent(change: change) } throws: { ($0 as? WebhookError)?.code == .noTrigger }
    }
}
