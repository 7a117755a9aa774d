import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// `GET /readyz`: what a balancer or Kubernetes asks before sending clients.
    @Suite("SignalingIntegration: readiness", .blocking)
    struct ReadinessTests {
        @Test("ready once the store is open and the listeners are up")
        func readyWhileServing() throws {
            let h = try Harness()
            defer { h.finish() }
            let response = try h.rest("GET", "/readyz", apiKey: nil)
            #expect(response.status == 200, "\(response)")
            #expect(response.json?["status"]?.stringValue == "ready")
        }

        /// New connections are not taken once the stop starts, so the 503 is
        /// read from the answer the route serves rather than over a socket.
        @Test("not ready once a graceful stop has started")
        func notReadyWhileStopping() throws {
            let h = try Harness()
            defer { h.finish() }
            #expect(h.server.server.stats.isReady)
            h.server.beginShutdown()
            let stats = h.server.server.stats
            #expect(!stats.isReady)
            #expect(stats.readinessResponse.status.code == 503)
            let body = try JSONValue.parse(stats.readinessResponse.body)
            #expect(body["status"]?.stringValue == "not ready")
        }
    }
}
