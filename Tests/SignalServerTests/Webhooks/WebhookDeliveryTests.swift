import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// A receiver, a temporary directory and the ringd ``ringd(_:_:)`` starts
/// there with one endpoint; ``finish()`` stops them in that order's reverse.
final class WebhookRig {
    let receiver: WebhookReceiver
    let directory: TemporaryDirectory
    private var harness: SignalingIntegration.Harness?

    init(tls certificate: CertificateFiles? = nil) throws {
        receiver = try WebhookReceiver(tls: certificate)
        directory = try TemporaryDirectory()
    }

    /// A ringd whose one endpoint is `url` (signed with both test secrets,
    /// retried after 50 ms), its store in ``directory``.
    func ringd(
        _ url: String, _ adjust: @escaping (inout WebhookSettings) -> Void = { _ in }
    ) throws -> SignalingIntegration.Harness {
        let signature = try WebhookSignature(secrets: WebhookDeliveryTests.secrets)
        let directory = self.directory
        let harness = try SignalingIntegration.Harness { config in
            config.storePath = directory.file("ringd.sqlite")
            config.webhooks.endpoints = [WebhookEndpoint(url: url, signature: signature)]
            config.webhooks.retrySeconds = [0.05]
            adjust(&config.webhooks)
        }
        self.harness = harness
        return harness
    }

    func finish() {
        harness?.finish()
        receiver.stop()
        directory.remove()
    }
}

/// Webhooks end to end in one process: calls on a real ringd, events through
/// the outbox and libcurl to a real receiver over loopback.
@Suite(.blocking) struct WebhookDeliveryTests {
    static let secrets = [WebhookExample.firstSecret, WebhookExample.secondSecret]

    /// The requests `receiver` got at `path`, once there are `count` (waited for).
    static func requests(
        _ receiver: WebhookReceiver, _ path: String, count: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> [ReceivedWebhook] {
        let arrived = waitUntil(timeout: 15) { receiver.log.count(path: path) >= count }
        #expect(
            arrived, "\(receiver.log.count(path: path)) of \(count) requests arrived", sourceLocation: sourceLocation)
        return receiver.log.requests.filter { $0.path == path }
    }

    static func json(_ request: ReceivedWebhook) -> JSONValue { (try? JSONValue.parse(request.body)) ?? .null }

    @Test func everyTriggerArrivesOnceInOrderPerCallSignedWithBothSecrets() throws {
        let rig = try WebhookRig()
        defer { rig.finish() }
        let receiver = rig.receiver
        let h = try rig.ringd(receiver.url("/ok"))
        let alice = try h.device("alice", "a1"), bob = try h.device("bob", "b1")
        let carol = try h.device("carol", "c1"), dave = try h.device("dave", "d1")

        let talked = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.waitForEvent(talked, .initiated)
        _ = try bob.accept(talked).call()
        _ = try alice.end(talked).call()
        let declined = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.waitForEvent(declined, .initiated)
        _ = try bob.reject(declined).call()
        let held = try carol.initiate(to: "dave").call().sessionId
        _ = try dave.waitForEvent(held, .initiated)
        _ = try dave.accept(held).call()
        let busy = try alice.initiate(to: "dave").call().sessionId
        let given = try alice.initiate(to: "bob").call().sessionId
        _ = try alice.cancel(given).call()
        let missed = try alice.initiate(to: "bob", timeout: 1).call().sessionId
        _ = try alice.waitForEvent(missed, .unanswered, timeout: 5)

        let expected: [String: [String]] = [
            talked: ["call_initiated", "call_started", "call_ended"],
            declined: ["call_initiated", "call_rejected"],
            held: ["call_initiated", "call_started"],
            busy: ["call_busy"],
            given: ["call_initiated", "call_cancelled"],
            missed: ["call_initiated", "call_unanswered"],
        ]
        let received = Self.requests(receiver, "/ok", count: expected.values.reduce(0) { $0 + $1.count })
        var triggers: [String: [String]] = [:]
        var seqs: [String: [Int64]] = [:]
        for request in received {
            let body = Self.json(request)
            guard let sessionId = body["data"]?["sessionId"]?.stringValue, let trigger = body["trigger"]?.stringValue,
                let seq = body["data"]?["call"]?["seq"]?.integerValue
            else {
                Issue.record("not an event: \(String(decoding: request.body, as: UTF8.self))")
                continue
            }
            triggers[sessionId, default: []].append(trigger)
            seqs[sessionId, default: []].append(seq)
            #expect(
                request.headers["webhook-id"] == "evt_\(sessionId)_\(seq)"
                    && body["id"]?.stringValue == request.headers["webhook-id"])
            #expect(request.headers["content-type"] == "application/json")
            let timestamp = try #require(request.headers["webhook-timestamp"].flatMap { Int64($0) })
            let signed = try WebhookSignature(secrets: Self.secrets).headers(
                id: request.headers["webhook-id"] ?? "",
                timestamp: timestamp, body: request.body)
            #expect(request.headers["webhook-signature"] == signed.signature)
            #expect(request.headers["webhook-signature"]?.split(separator: " ").count == 2, "one signature per secret")
            #expect(request.headers["x-cometchat-signature"] == signed.cometChatSignature)
        }
        #expect(triggers == expected)
        #expect(seqs.values.allSatisfy { $0 == $0.sorted() }, "the events of a call arrive in the order of its changes")
        #expect(receiver.log.requests.count == received.count, "each event once")
        let first = try #require(received.first)
        try WebhookStandardLibraryTests.expectVerified(
            body: first.body, headers: first.headers.map { ($0.name, $0.value) },
            secrets: Self.secrets)
    }

    @Test func anHTTPSEndpointIsVerifiedWithTheConfiguredCA() throws {
        let certificate = try CertificateFiles()
        defer { certificate.directory.remove() }
        let rig = try WebhookRig(tls: certificate)
        defer { rig.finish() }
        let receiver = rig.receiver
        let h = try rig.ringd(receiver.url("/ok")) { $0.caFile = certificate.certificatePath }
        let alice = try h.device("alice", "a1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        let received = Self.requests(receiver, "/ok", count: 1)
        #expect(Self.json(received[0])["data"]?["sessionId"] == .string(sessionId))
        #expect(Self.json(received[0])["trigger"] == .string("call_initiated"))
    }

    @Test func anHTTPSEndpointWhoseCertificateIsNotTrustedIsNeverDelivered() throws {
        let certificate = try CertificateFiles()
        defer { certificate.directory.remove() }
        let rig = try WebhookRig(tls: certificate)
        defer { rig.finish() }
        let (receiver, directory) = (rig.receiver, rig.directory)
        let h = try rig.ringd(receiver.url("/ok")) { $0.maxAttempts = 1 }
        let alice = try h.device("alice", "a1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        let database = try SQLiteDatabase(path: directory.file("ringd.sqlite"))
        var row: String?
        let failed = waitUntil(timeout: 10) {
            row = try? database.scalarText(
                "SELECT status || ' ' || coalesce(last_error, '') FROM webhook_deliveries WHERE session_id = '\(sessionId)'"
            )
            return row?.hasPrefix("failed") == true
        }
        #expect(failed && row?.hasPrefix("failed TLS") == true, "\(row ?? "missing")")
        #expect(receiver.log.requests.isEmpty, "nothing reached a receiver ringd could not verify")
    }

    @Test func aFailedAttemptIsRetriedWithTheSameIdAndBodyAndTheCallsNextEventWaits() throws {
        let rig = try WebhookRig()
        defer { rig.finish() }
        let receiver = rig.receiver
        let h = try rig.ringd(receiver.url("/flaky"))
        let alice = try h.device("alice", "a1"), bob = try h.device("bob", "b1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.waitForEvent(sessionId, .initiated)
        _ = try bob.accept(sessionId).call()

        let attempts = Self.requests(receiver, "/flaky", count: 6)
        let ids = attempts.map { $0.headers["webhook-id"] ?? "" }
        #expect(ids.count == 6 && Set(ids).count == 2, "\(ids)")
        #expect(
            Array(ids.prefix(3)) == Array(repeating: ids[0], count: 3),
            "the call's second event waits for its first: \(ids)")
        for id in Set(ids) {
            let bodies = Set(attempts.filter { $0.headers["webhook-id"] == id }.map(\.body))
            #expect(bodies.count == 1, "every attempt of \(id) is the same bytes")
        }
        #expect(Self.json(attempts[0])["trigger"] == .string("call_initiated"))
        #expect(Self.json(attempts[5])["trigger"] == .string("call_started"))
    }

    @Test(arguments: [("/fail", "HTTP 500"), ("/silent", "TIMEOUT"), ("closed", "CONNECT")])
    func anEventWhoseLastAttemptFailsIsMarkedFailedAndKept(path: String, error: String) throws {
        let rig = try WebhookRig()
        defer { rig.finish() }
        let (receiver, directory) = (rig.receiver, rig.directory)
        let closed = try boundLoopbackSocket()
        defer { close(closed.fd) }
        let url = path == "closed" ? "http://127.0.0.1:\(closed.port)/hook" : receiver.url(path)
        let h = try rig.ringd(url) { settings in
            settings.maxAttempts = 2
            settings.timeout = 0.3
        }
        let alice = try h.device("alice", "a1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId

        let database = try SQLiteDatabase(path: directory.file("ringd.sqlite"))
        let sql =
            "SELECT status || ' ' || attempts || ' ' || coalesce(last_error, '') FROM webhook_deliveries WHERE session_id = '\(sessionId)'"
        var row: String?
        let failed = waitUntil(timeout: 15) {
            row = try? database.scalarText(sql)
            return row?.hasPrefix("failed") == true
        }
        #expect(failed, "the delivery is \(row ?? "missing")")
        #expect(row?.hasPrefix("failed 2 \(error)") == true, "\(row ?? "")")
        if path != "closed" {
            let ids = receiver.log.requests.filter { $0.path == path }.map { $0.headers["webhook-id"] }
            #expect(ids.count == 2 && Set(ids).count == 1, "both attempts carry the same webhook-id: \(ids)")
        }
    }
}
