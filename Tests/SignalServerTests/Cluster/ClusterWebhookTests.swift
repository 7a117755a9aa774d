import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// Webhooks in a cluster (docs/CLUSTER.md, "Webhooks"): every node writes
/// the outbox in its transactions, one node sends it; when that node dies
/// another takes over and what was pending still arrives, in order per call.
@Suite("Cluster: webhooks from two ringd nodes", .blocking)
struct ClusterWebhookTests {
    typealias TestCluster = SignalingIntegration.TestCluster

    /// An event request as the receiver got it.
    struct Heard {
        let id: String
        let sessionId: String
        let seq: Int64
        let trigger: String
        let request: ReceivedWebhook
    }

    static let sentLine = "this node sends the cluster's webhooks"

    static func cluster(nodes: Int, posting url: String, environment: [String: String] = [:]) throws -> TestCluster {
        let endpoints = JSONValue.array([
            .object([
                ("url", .string(url)),
                ("secrets", .array([.string(WebhookExample.firstSecret)])),
            ])
        ])
        return try TestCluster(
            nodes: nodes,
            environment: [
                "RINGD_WEBHOOKS_ENDPOINTS": endpoints.serialized,
                "RINGD_WEBHOOKS_RETRY_SECONDS": "[0.05]",
            ].merging(environment) { $1 })
    }

    /// The index of the node that says it sends the webhooks, within 10 s.
    static func leader(of cluster: TestCluster) -> Int? {
        var leader: Int?
        _ = waitUntil(timeout: 10) {
            leader = cluster.nodes.firstIndex { $0.log.contains(Self.sentLine) }
            return leader != nil
        }
        return leader
    }

    /// The failed deliveries node `index` lists, once there are `count` of them (within 10 s).
    static func failed(_ cluster: TestCluster, via index: Int, count: Int) -> [JSONValue] {
        var failed: [JSONValue] = []
        _ = waitUntil(timeout: 10) {
            let page = try? SignalingIntegration.rest(
                port: cluster.port(index), "GET", "/v1/webhooks/deliveries?status=failed")
            guard case .array(let rows)? = page?.json?["deliveries"] else { return false }
            failed = rows
            return rows.count == count
        }
        return failed
    }

    static func heard(_ receiver: WebhookReceiver) -> [Heard] {
        receiver.log.requests.compactMap { request in
            guard let body = try? JSONValue.parse(request.body), let id = request.headers["webhook-id"],
                let sessionId = body["data"]?["sessionId"]?.stringValue, let trigger = body["trigger"]?.stringValue,
                let seq = body["data"]?["call"]?["seq"]?.integerValue
            else { return nil }
            return Heard(id: id, sessionId: sessionId, seq: seq, trigger: trigger, request: request)
        }
    }

    /// Every delivery the outbox lists (through node `index`'s REST API) is
    /// delivered, and there are `count` of them, within 30 s.
    static func allDelivered(_ cluster: TestCluster, via index: Int, count: Int) -> Bool {
        waitUntil(timeout: 30) {
            guard
                let page = try? SignalingIntegration.rest(
                    port: cluster.port(index), "GET",
                    "/v1/webhooks/deliveries?limit=100"
                ).json,
                case .array(let rows)? = page["deliveries"]
            else { return false }
            return rows.count == count && rows.allSatisfy { $0["status"] == .string("delivered") }
        }
    }

    /// Places `count` calls from alice to bob that are accepted and ended.
    static func talk(
        _ alice: SignalingIntegration.Device, _ bob: SignalingIntegration.Device, count: Int
    ) throws -> [String] {
        try (0 ..< count).map { _ in
            let sessionId = try alice.initiate(to: "bob").call().sessionId
            _ = try bob.waitForEvent(sessionId, .initiated)
            _ = try bob.accept(sessionId).call()
            _ = try alice.end(sessionId).call()
            return sessionId
        }
    }

    @Test("calls with the parties on two nodes: every change reaches the endpoint once, in order per call, signed")
    func everyChangeOnceInOrder() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let cluster = try Self.cluster(nodes: 2, posting: receiver.url("/ok"))
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let talked = try Self.talk(alice, bob, count: 1)[0]
        let declined = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.waitForEvent(declined, .initiated)
        _ = try bob.reject(declined).call()
        let given = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.waitForEvent(given, .initiated)
        _ = try alice.cancel(given).call()
        let expected = [
            talked: ["call_initiated", "call_started", "call_ended"],
            declined: ["call_initiated", "call_rejected"], given: ["call_initiated", "call_cancelled"],
        ]
        let total = expected.values.reduce(0) { $0 + $1.count }

        // Listed through the node that is not alice's: any node reads the outbox.
        #expect(Self.allDelivered(cluster, via: 1, count: total), "\(cluster.logs)")
        let heard = Self.heard(receiver)
        #expect(heard.count == total, "once each: \(heard.map(\.id))")
        #expect(Set(heard.map(\.id)).count == heard.count)
        #expect(Dictionary(grouping: heard, by: \.sessionId).mapValues { $0.map(\.trigger) } == expected)
        for events in Dictionary(grouping: heard, by: \.sessionId).values {
            #expect(events.map(\.seq) == events.map(\.seq).sorted(), "in the order of the call's changes")
        }
        for event in heard {
            #expect(event.id == "evt_\(event.sessionId)_\(event.seq)")
            let timestamp = try #require(event.request.headers["webhook-timestamp"].flatMap { Int64($0) })
            let signed = try WebhookSignature(secrets: [WebhookExample.firstSecret])
                .headers(id: event.id, timestamp: timestamp, body: event.request.body)
            #expect(event.request.headers["webhook-signature"] == signed.signature)
        }
        let leaders = cluster.nodes.filter { $0.log.contains(Self.sentLine) }
        #expect(leaders.count == 1, "one node sends: \(cluster.logs)")
    }

    @Test(
        "kill -9 of the node sending webhooks mid-stream: the other takes over, every event arrives, in order per call")
    func leaderKilledMidStream() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        // Each event is answered 500 twice, then 200: the stream lasts, retries included.
        let cluster = try Self.cluster(nodes: 2, posting: receiver.url("/flaky"))
        let killed = try #require(Self.leader(of: cluster), "\(cluster.logs)"), survivor = 1 - killed
        let alice = try cluster.open(survivor, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(survivor, uid: "bob", deviceId: "b1")
        let before = try Self.talk(alice, bob, count: 6)
        #expect(waitUntil(timeout: 10) { !receiver.log.requests.isEmpty })
        cluster.nodes[killed].signal(SIGKILL)
        #expect(cluster.nodes[killed].waitForExit(timeout: 10))
        let answered = Set(Self.heard(receiver).map(\.id)).filter { id in
            Self.heard(receiver).filter { $0.id == id }.count >= 3
        }
        #expect(answered.count < before.count * 3, "the leader died with events to send")
        let after = try Self.talk(alice, bob, count: 2)

        let total = (before.count + after.count) * 3
        #expect(Self.allDelivered(cluster, via: survivor, count: total), "\(cluster.logs)")
        #expect(cluster.nodes[survivor].log.contains(Self.sentLine), "the survivor took over: \(cluster.logs)")
        let heard = Self.heard(receiver)
        let calls = Dictionary(grouping: heard, by: \.sessionId)
        #expect(Set(calls.keys) == Set(before + after))
        for (sessionId, events) in calls {
            let firsts = events.map(\.seq).reduce(into: [Int64]()) { if !$0.contains($1) { $0.append($1) } }
            #expect(firsts.count == 3 && firsts == firsts.sorted(), "\(sessionId): \(events.map(\.seq))")
            // An event is first sent only once the one before it was answered 200 (its third request).
            for (earlier, later) in zip(firsts, firsts.dropFirst()) {
                let answeredAt = try #require(events.indices.filter { events[$0].seq == earlier }.dropFirst(2).first)
                let firstSent = try #require(events.firstIndex { $0.seq == later })
                #expect(firstSent > answeredAt, "\(sessionId): \(events.map(\.seq))")
            }
        }
    }

    @Test("failed deliveries retried through either node are sent again by the one that sends")
    func retriedThroughEitherNode() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let cluster = try Self.cluster(
            nodes: 2, posting: receiver.url("/fail"),
            environment: ["RINGD_WEBHOOKS_MAX_ATTEMPTS": "1"])
        let leader = try #require(Self.leader(of: cluster), "\(cluster.logs)"), other = 1 - leader
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.waitForEvent(sessionId, .initiated)
        _ = try alice.cancel(sessionId).call()

        let failed = Self.failed(cluster, via: other, count: 2)
        #expect(failed.map { $0["trigger"]?.stringValue } == ["call_cancelled", "call_initiated"], "\(failed)")
        let id = try #require(failed.last?["id"]?.stringValue)
        let eventId = try #require(failed.last?["eventId"]?.stringValue)
        let retried = try SignalingIntegration.rest(
            port: cluster.port(other), "POST", "/v1/webhooks/deliveries/\(id)/retry")
        #expect(retried.status == 200 && retried.json?["status"] == .string("pending"), "\(retried)")
        let attempts = { receiver.log.requests.filter { $0.headers["webhook-id"] == eventId }.count }
        #expect(waitUntil(timeout: 10) { attempts() == 2 }, "the leader sends the retry: \(cluster.logs)")
        #expect(Self.failed(cluster, via: leader, count: 2).count == 2, "the retry failed again")

        let all = try SignalingIntegration.rest(
            port: cluster.port(leader), "POST", "/v1/webhooks/deliveries/retry?status=failed")
        #expect(all.json?["retried"] == .integer(2), "\(all)")
        #expect(waitUntil(timeout: 10) { receiver.log.requests.count == 5 }, "\(receiver.log.requests.count) requests")
    }

    @Test("every node reports the cluster's outbox: what waits for an endpoint that does not answer")
    func outboxDepthOnEveryNode() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let cluster = try Self.cluster(nodes: 2, posting: receiver.url("/silent"))
        let leader = try #require(Self.leader(of: cluster), "\(cluster.logs)")
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let placed = try alice.initiate(to: "bob").call()
        #expect(waitUntil(timeout: 10) { receiver.log.parkedCount == 1 }, "the leader sends it: \(cluster.logs)")
        for index in [leader, 1 - leader] {
            let outbox = try #require(
                try SignalingIntegration.rest(port: cluster.port(index), "GET", "/v1/webhooks/outbox").json)
            #expect(
                outbox["pending"] == .integer(1) && outbox["backlog"] == .bool(false),
                "node \(index): \(outbox.serialized)")
            #expect(
                outbox["oldestPendingCreatedAt"] == .integer(placed.initiatedAt), "node \(index): \(outbox.serialized)")
        }

        // Without the database a node cannot say, rather than claim that nothing waits.
        try cluster.postgres.crash()
        let unread = try SignalingIntegration.rest(port: cluster.port(0), "GET", "/v1/webhooks/outbox")
        #expect(unread.status == 503 && unread.json?["error"]?["code"] == .string("ERR_UNAVAILABLE"), "\(unread)")
    }
}
