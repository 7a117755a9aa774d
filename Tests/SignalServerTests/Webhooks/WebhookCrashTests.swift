import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// The ringd binary killed with -9 while webhooks are in flight: after the
/// restart, every change a client was told of reaches the endpoint at least
/// once, and no event tells of a change that was not committed.
@Suite(.blocking) struct WebhookCrashTests {
    @Test func killNineLosesNoCommittedEventAndSendsNoUncommittedOne() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let endpoints = JSONValue.array([
            .object([
                ("url", .string(receiver.url("/ok"))),
                ("secrets", .array([.string(WebhookExample.firstSecret)])),
            ])
        ])
        let environment = SignalingIntegration.CrashRecoveryTests.limits.merging([
            "RINGD_WEBHOOKS_ENDPOINTS": endpoints.serialized, "RINGD_WEBHOOKS_RETRY_SECONDS": "[0.05]",
            "RINGD_CALLS_RESTART_GRACE_SECONDS": "2",
        ]) { $1 }
        try withRingd(environment: environment) { ringd in
            let burst = try SignalingIntegration.CrashRecoveryTests.burstThenKill(ringd, completing: 60)
            try ringd.restart()

            // Every status a client heard was committed: its event must come.
            let told = burst.ledger.statuses.flatMap { sessionId, statuses in statuses.map { "\(sessionId) \($0)" } }
            var heard: Set<String> = []
            let complete = waitUntil(timeout: 20) {
                heard = Set(
                    receiver.log.requests.compactMap { request in
                        let body = (try? JSONValue.parse(request.body)) ?? .null
                        guard let sessionId = body["data"]?["sessionId"]?.stringValue,
                            let status = body["data"]?["call"]?["status"]?.stringValue
                        else { return nil }
                        return "\(sessionId) \(status)"
                    })
                return Set(told).isSubset(of: heard)
            }
            #expect(complete, "never delivered: \(Set(told).subtracting(heard).sorted().prefix(10))")
            #expect(told.count >= 120)

            // Every event delivered tells of a change the store holds.
            for request in receiver.log.requests {
                let body = try JSONValue.parse(request.body)
                let sessionId = try #require(body["data"]?["sessionId"]?.stringValue)
                let seq = try #require(body["data"]?["call"]?["seq"]?.integerValue)
                let stored = try #require(
                    try SignalingIntegration.rest(port: ringd.port, "GET", "/v1/calls/\(sessionId)").json,
                    "an event for a call the store does not hold: \(sessionId)")
                #expect(
                    (stored["seq"]?.integerValue ?? 0) >= seq,
                    "event \(seq) of \(sessionId) is past the store's \(stored.serialized)")
            }
        }
    }
}
