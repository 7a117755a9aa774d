import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

private extension JSONValue {
    var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }
}

/// The REST API over the outbox: listing by status with a cursor, retrying
/// one failed delivery or all, a test event, and the outbox's depth.
@Suite(.blocking) struct WebhookRestTests {
    @Test func failedDeliveriesAreListedAndRetriedWithTheSameEventId() throws {
        let rig = try WebhookRig()
        defer { rig.finish() }
        let receiver = rig.receiver
        let url = receiver.url("/fail")
        let h = try rig.ringd(url) { $0.maxAttempts = 1 }
        let alice = try h.device("alice", "a1")
        let first = try alice.initiate(to: "bob").call().sessionId
        _ = try alice.cancel(first).call()

        var failed: [JSONValue] = []
        let settled = waitUntil(timeout: 10) {
            failed = (try? h.rest("GET", "/v1/webhooks/deliveries?status=failed").json?["deliveries"]?.arrayValue) ?? []
            return failed.count == 2
        }
        #expect(settled, "\(failed)")
        #expect(failed.map { $0["trigger"]?.stringValue } == ["call_cancelled", "call_initiated"], "newest first")
        #expect(
            failed.allSatisfy {
                $0["lastStatus"] == .integer(500) && $0["attempts"] == .integer(1) && $0["endpoint"] == .string(url)
            })

        let page = try #require(try h.rest("GET", "/v1/webhooks/deliveries?limit=1").json)
        #expect(page["deliveries"]?.arrayValue?.count == 1)
        let cursor = try #require(page["next"]?.stringValue)
        let second = try #require(try h.rest("GET", "/v1/webhooks/deliveries?limit=1&cursor=\(cursor)").json)
        #expect(second["deliveries"]?.arrayValue?.first?["trigger"] == .string("call_initiated"))
        #expect(second["next"] == .null)
        #expect(try h.rest("GET", "/v1/webhooks/deliveries?cursor=nonsense").status == 400)
        #expect(try h.rest("GET", "/v1/webhooks/deliveries?status=gone").status == 400)

        let id = try #require(failed.last?["id"]?.stringValue)
        let eventId = try #require(failed.last?["eventId"]?.stringValue)
        let retried = try h.rest("POST", "/v1/webhooks/deliveries/\(id)/retry")
        #expect(retried.status == 200 && retried.json?["status"] == .string("pending"), "\(retried)")
        let attempts = { receiver.log.requests.filter { $0.headers["webhook-id"] == eventId }.count }
        #expect(waitUntil(timeout: 10) { attempts() == 2 }, "the retry is sent with the same webhook-id")
        #expect(
            waitUntil(timeout: 10) {
                (try? h.rest("GET", "/v1/webhooks/deliveries?status=failed").json?["deliveries"]?.arrayValue?.count)
                    == 2
            }, "the retry failed again, and counts one attempt")
        let all = try h.rest("POST", "/v1/webhooks/deliveries/retry?status=failed")
        #expect(all.json?["retried"] == .integer(2), "\(all)")
        #expect(try h.rest("POST", "/v1/webhooks/deliveries/retry").status == 400)
        #expect(try h.rest("POST", "/v1/webhooks/deliveries/dlv_1_00000000/retry").status == 404)
        #expect(try h.rest("GET", "/v1/webhooks/deliveries", apiKey: nil).status == 401)
    }

    @Test func aTestEventReportsTheEndpointsAnswerAndTheOutboxItsDepth() throws {
        let rig = try WebhookRig()
        defer { rig.finish() }
        let receiver = rig.receiver
        let url = receiver.url("/ok")
        let h = try rig.ringd(url)
        let test = try h.rest("POST", "/v1/webhooks/test", body: #"{"url":"\#(url)"}"#)
        #expect(test.json?["delivered"] == .bool(true) && test.json?["status"] == .integer(200), "\(test)")
        let sent = try #require(receiver.log.requests.last)
        #expect((try? JSONValue.parse(sent.body))?["trigger"] == .string("test"))
        #expect(sent.headers["webhook-signature"]?.hasPrefix("v1,") == true)
        #expect(try h.rest("POST", "/v1/webhooks/test", body: #"{"url":"http://elsewhere/"}"#).status == 404)
        let outbox = try #require(try h.rest("GET", "/v1/webhooks/outbox").json)
        #expect(outbox["pending"] == .integer(0) && outbox["oldestPendingCreatedAt"] == .null)
    }
}

/// More events than memory holds wait in the store and are read back.
@Suite(.blocking) struct WebhookBacklogTests {
    @Test func eventsPastTheMemoryLimitAreReadBackFromTheStoreAndEachSentOnce() throws {
        let rig = try WebhookRig()
        defer { rig.finish() }
        let receiver = rig.receiver
        // A receiver that never answers: each attempt takes the whole
        // timeout, so the events pile up behind the first.
        let h = try rig.ringd(receiver.url("/silent")) { settings in
            settings.maxAttempts = 1
            settings.maxEventsInMemory = 4
            settings.concurrency = 1
            settings.timeout = 0.25
        }
        let alice = try h.device("alice", "a1")
        var sessions: [String] = []
        for _ in 0 ..< 10 {
            let sessionId = try alice.initiate(to: "bob").call().sessionId
            _ = try alice.cancel(sessionId).call()
            sessions.append(sessionId)
        }
        let outbox = try #require(try h.rest("GET", "/v1/webhooks/outbox").json)
        #expect(outbox["backlog"] == .bool(true) && (outbox["pending"]?.integerValue ?? 99) <= 4, "\(outbox)")
        let all = waitUntil(timeout: 30) { receiver.log.count(path: "/silent") >= 20 }
        #expect(all, "\(receiver.log.count(path: "/silent")) of 20 events were sent")
        let ids = receiver.log.requests.map { $0.headers["webhook-id"] ?? "" }
        #expect(
            Set(ids).count == 20 && ids.count == 20, "each event once: \(ids.count) sent, \(Set(ids).count) distinct")
        for sessionId in sessions {
            let order = ids.filter { $0.hasPrefix("evt_\(sessionId)_") }
            #expect(order.count == 2 && order == order.sorted { $0.count == $1.count ? $0 < $1 : $0.count < $1.count })
        }
    }

    /// With two endpoints that never answer a change has two rows, and a
    /// page read back from the store (three rows here) can end between
    /// them: the change's other row is read with the next page, not skipped.
    @Test func aChangeSplitByAPageIsSentToEveryEndpoint() throws {
        let rig = try WebhookRig()
        defer { rig.finish() }
        let receiver = rig.receiver
        let signature = try WebhookSignature(secrets: WebhookDeliveryTests.secrets)
        let h = try rig.ringd(receiver.url("/silent")) { settings in
            settings.endpoints.append(WebhookEndpoint(url: receiver.url("/silent2"), signature: signature))
            settings.maxAttempts = 1
            settings.maxEventsInMemory = 6
            settings.concurrency = 1
            settings.timeout = 0.25
        }
        let alice = try h.device("alice", "a1")
        for _ in 0 ..< 10 {
            let sessionId = try alice.initiate(to: "bob").call().sessionId
            _ = try alice.cancel(sessionId).call()
        }
        let all = waitUntil(timeout: 30) {
            receiver.log.count(path: "/silent") >= 20 && receiver.log.count(path: "/silent2") >= 20
        }
        #expect(
            all, "sent: \(receiver.log.count(path: "/silent")) and \(receiver.log.count(path: "/silent2")) of 20 each")
        for path in ["/silent", "/silent2"] {
            let ids = receiver.log.requests.filter { $0.path == path }.map { $0.headers["webhook-id"] ?? "" }
            #expect(Set(ids).count == 20 && ids.count == 20, "\(path): each event once, \(ids.count) sent")
        }
    }
}

/// Where a read of the store's backlog ends and the next one starts.
struct WebhookBacklogPageTests {
    static func rows(_ seqs: Int64...) -> [WebhookDelivery] {
        seqs.enumerated().map { index, seq in WebhookDelivery.fixture(seq, endpoint: "http://e\(index)/") }
    }

    @Test func aFullPageLeavesItsLastChangeForTheNextRead() {
        let page = WebhookDispatcher.split(Self.rows(4, 4, 7, 9, 9), limit: 5)
        #expect(page.held.map(\.seq) == [4, 4, 7] && page.next == 9)
    }

    @Test func aShortPageIsTheEndOfTheBacklog() {
        let page = WebhookDispatcher.split(Self.rows(4, 4, 7), limit: 5)
        #expect(page.held.count == 3 && page.next == nil)
    }

    @Test func aPageOfOneChangeIsHeldAndTheReadGoesOnAfterIt() {
        let page = WebhookDispatcher.split(Self.rows(9, 9, 9), limit: 3)
        #expect(page.held.count == 3 && page.next == 10)
    }
}
