import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

/// ``OutboundHTTPClient`` under many requests, a receiver that never
/// answers, and `close()` with work in flight.
@Suite(.blocking) struct WebhookClientLoadTests {
    @Test func twoHundredConcurrentRequestsCompleteOnAFewReusedConnections() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 4, caFile: nil)
        defer { client.close() }
        let responses = WebhookResponses()
        let count = 200
        let url = receiver.url("/ok")
        // From four threads at once, as the dispatcher's callers might.
        DispatchQueue.concurrentPerform(iterations: 4) { part in
            for index in stride(from: part, to: count, by: 4) {
                client.send(
                    OutboundRequest(
                        url: url, headers: [("X-Index", "\(index)")],
                        body: Array("{\"index\":\(index)}".utf8), timeout: 20),
                    completion: responses.completion)
            }
        }
        let all = try #require(responses.wait(for: count, timeout: 60))
        #expect(all.allSatisfy { $0.status == 200 && $0.error == nil })
        #expect(receiver.log.count(path: "/ok") == count)
        let indexes = Set(receiver.log.requests.compactMap { $0.headers["X-Index"].flatMap { Int($0) } })
        #expect(indexes == Set(0 ..< count))
        print("webhooks: \(count) requests over \(receiver.accepted) TCP connections (at most 4 per host)")
        #expect(receiver.accepted >= 1)
        #expect(receiver.accepted <= 4)
    }

    @Test func aReceiverThatNeverAnswersHoldsUpNoOtherReceiver() throws {
        let silent = try WebhookReceiver()
        defer { silent.stop() }
        let healthy = try WebhookReceiver()
        defer { healthy.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let stuck = WebhookResponses()
        // Enough to fill the silent host's one connection and queue behind it.
        for _ in 0 ..< 3 {
            client.send(
                OutboundRequest(url: silent.url("/silent"), body: [], timeout: 30), completion: stuck.completion)
        }
        #expect(waitUntil(timeout: 5) { silent.log.parkedCount == 1 })
        let started = monotonicSeconds()
        for _ in 0 ..< 5 {
            let response = try #require(
                client.exchange(OutboundRequest(url: healthy.url("/ok"), body: [], timeout: 10)))
            #expect(response.status == 200)
        }
        #expect(monotonicSeconds() - started < 5)
        #expect(stuck.all.isEmpty)
        client.close()
        let closed = try #require(stuck.wait(for: 3, timeout: 5))
        #expect(closed.allSatisfy { $0.error?.code == .closed && $0.status == nil })
    }

    /// libcurl's own timeout does not run while a transfer waits for a
    /// connection; the client's deadline does.
    @Test func aRequestWaitingForAConnectionStillTimesOutInTime() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let first = WebhookResponses()
        client.send(OutboundRequest(url: receiver.url("/silent"), body: [], timeout: 20), completion: first.completion)
        #expect(waitUntil(timeout: 5) { receiver.log.parkedCount == 1 })
        let waiting = try #require(client.exchange(OutboundRequest(url: receiver.url("/ok"), body: [], timeout: 0.5)))
        #expect(waiting.error?.code == .timeout)
        #expect(waiting.status == nil)
        #expect(waiting.elapsed >= 0.45 && waiting.elapsed < 3)
        #expect(waiting.error?.message.contains("free connection") == true)
        #expect(receiver.log.count(path: "/ok") == 0)
        #expect(first.all.isEmpty)
    }

    @Test(arguments: [false, true])
    func closeFailsWhatIsPendingAndLaterSendsAtOnce(tls: Bool) throws {
        let certificate = try tls ? CertificateFiles() : nil
        defer { certificate?.remove() }
        let receiver = try WebhookReceiver(tls: certificate)
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 2, caFile: certificate?.certificatePath)
        let pending = WebhookResponses()
        // Two in flight on the two connections, three waiting for one.
        for _ in 0 ..< 5 {
            client.send(
                OutboundRequest(url: receiver.url("/silent"), body: [], timeout: 30), completion: pending.completion)
        }
        #expect(waitUntil(timeout: 5) { receiver.log.parkedCount == 2 })
        let started = monotonicSeconds()
        client.close()
        #expect(monotonicSeconds() - started < 2)
        // close() returned after the curl thread ran every completion.
        let closed = pending.all
        #expect(closed.count == 5)
        #expect(closed.allSatisfy { $0.error?.code == .closed && $0.status == nil })

        let after = WebhookResponses()
        client.send(OutboundRequest(url: receiver.url("/ok"), body: [], timeout: 5), completion: after.completion)
        // Completed on this thread before send returned.
        #expect(after.all.count == 1)
        #expect(after.all.first?.error?.code == .closed)
        #expect(receiver.log.count(path: "/ok") == 0)
        client.close()
    }

    @Test func aCompletionMaySendAndClose() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let responses = WebhookResponses()
        let chained = WebhookResponses()
        let url = receiver.url("/ok")
        client.send(OutboundRequest(url: url, body: [], timeout: 10)) { [client] first in
            responses.completion(first)
            client.send(OutboundRequest(url: url, body: [], timeout: 10)) { second in
                // Returns at once: the curl thread stops after this completion.
                client.close()
                chained.completion(second)
            }
        }
        #expect(try #require(responses.wait(for: 1)).first?.status == 200)
        #expect(try #require(chained.wait(for: 1)).first?.status == 200)
        let after = WebhookResponses()
        client.send(OutboundRequest(url: url, body: [], timeout: 5), completion: after.completion)
        #expect(after.all.first?.error?.code == .closed)
        // The curl thread exits, so this close (joining it) returns.
        client.close()
    }
}
