import Foundation
import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// `GET /metrics` on a live ringd after a few calls: the values follow
    /// what happened, and promtool accepts the text.
    @Suite("SignalingIntegration: metrics", .blocking)
    struct MetricsTests {
        /// Three calls (ended, rejected, cancelled) and one refused request.
        private static func placeCalls(_ h: Harness) throws {
            let a = try h.device("alice", "a1"), b = try h.device("bob", "b1")
            let first = try a.initiate(to: "bob").call().sessionId
            _ = try b.accept(first)
            _ = try a.end(first)
            let second = try a.initiate(to: "bob").call().sessionId
            _ = try b.reject(second)
            let third = try a.initiate(to: "bob").call().sessionId
            _ = try a.cancel(third)
            #expect(try a.initiate(to: "alice").code == "ERR_CALLING_SELF")
            // One left ringing, for the live gauge.
            _ = try a.initiate(to: "bob").call()
        }

        /// The samples of the scrape, by series (name and labels as written).
        private static func samples(_ text: String) -> [String: Double] {
            var samples: [String: Double] = [:]
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                    continue
                }
                samples[String(line[..<space])] = value
            }
            return samples
        }

        @Test("counts calls, devices, errors and store batches; 401 without the API key")
        func values() throws {
            let h = try Harness()
            defer { h.finish() }
            try Self.placeCalls(h)

            let scrape = try h.rest("GET", "/metrics")
            #expect(scrape.status == 200)
            #expect(scrape.response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let values = Self.samples(scrape.response.bodyText)
            let expected: [String: Double] = [
                #"ringd_call_transitions_total{status="initiated",reason=""}"#: 4,
                #"ringd_call_transitions_total{status="ongoing",reason=""}"#: 1,
                #"ringd_call_transitions_total{status="ended",reason="hangup"}"#: 1,
                #"ringd_call_transitions_total{status="rejected",reason="rejected"}"#: 1,
                #"ringd_call_transitions_total{status="cancelled",reason="cancelled"}"#: 1,
                #"ringd_calls_live{status="initiated"}"#: 1,
                #"ringd_calls_live{status="ongoing"}"#: 0,
                "ringd_devices_authenticated": 2,
                #"ringd_request_errors_total{code="ERR_CALLING_SELF"}"#: 1,
                "ringd_call_ring_seconds_count": 1,
                "ringd_call_setup_seconds_count": 1,
                #"ringd_tls_handshakes_total{result="ok"}"#: 0,
            ]
            for (series, value) in expected {
                #expect(values[series] == value, "\(series)")
            }
            // Two devices and this scrape's own connection, at least.
            #expect((values["ringd_connections_open"] ?? 0) >= 3)
            #expect((values["ringd_store_commit_seconds_count"] ?? 0) >= 1)
            #expect((values["ringd_store_batch_size_sum"] ?? 0) >= 9)
            #expect((values["process_resident_memory_bytes"] ?? 0) > 1_000_000)
            #expect((values["process_open_fds"] ?? 0) > 3)
            #expect(values[#"ringd_store_batch_size_bucket{le="+Inf"}"#] == values["ringd_store_batch_size_count"])
            // The calls' changes are committed by the loop that took their
            // requests; start-up's jobs by the writer thread.
            #expect((values[#"ringd_store_batches_total{thread="loop"}"#] ?? 0) >= 1)
            #expect((values[#"ringd_store_batches_total{thread="writer"}"#] ?? 0) >= 1)
            // Each loop probes its lag once a second.
            let lagged = waitUntil(timeout: 5) {
                let text = (try? h.rest("GET", "/metrics").response.bodyText) ?? ""
                return (Self.samples(text)[#"ringd_event_loop_lag_seconds_count{loop="0"}"#] ?? 0) >= 1
            }
            #expect(lagged, "loop 0 never observed its lag")

            let anonymous = try h.rest("GET", "/metrics", apiKey: nil)
            #expect(anonymous.status == 401 && anonymous.errorCode == "ERR_UNAUTHORIZED", "\(anonymous)")
            #expect(try h.rest("GET", "/metrics", apiKey: "wrong").status == 401)
        }

        @Test("rate-limited frames are counted, on their own and among the errors")
        func rateLimited() throws {
            let h = try Harness { config in
                config.requestsPerSecond = 1
                config.requestBurst = 2
            }
            defer { h.finish() }
            let a = try h.device("alice", "a1")
            let ids = try (0 ..< 6).map { _ in try a.send("getActiveCall") }
            let limited = try ids.map { try a.result(for: $0) }.filter { $0.code == "ERR_RATE_LIMITED" }.count
            #expect(limited >= 3)
            let values = Self.samples(try h.rest("GET", "/metrics").response.bodyText)
            #expect(values["ringd_rate_limited_requests_total"] == Double(limited))
            #expect(values[#"ringd_request_errors_total{code="ERR_RATE_LIMITED"}"#] == Double(limited))
        }

        @Test("metrics.listen serves GET /metrics without a key, and nothing else")
        func separateListener() throws {
            let h = try Harness { $0.metricsListen = HostPort(host: "127.0.0.1", port: 0) }
            defer { h.finish() }
            try Self.placeCalls(h)
            let address = try #require(h.server.server.metricsAddress)
            #expect(address.port != h.port)

            let scrape = try SignalingIntegration.rest(port: address.port, "GET", "/metrics", apiKey: nil)
            #expect(scrape.status == 200)
            #expect(Self.samples(scrape.response.bodyText)[#"ringd_calls_live{status="initiated"}"#] == 1)
            #expect(try SignalingIntegration.rest(port: address.port, "GET", "/healthz").status == 404)
            #expect(try SignalingIntegration.rest(port: address.port, "GET", "/v1/calls/x").status == 404)
            #expect(try h.rest("GET", "/metrics", apiKey: nil).status == 401, "the public port still wants the key")
        }

        @Test("promtool check metrics accepts the scrape")
        func promtool() throws {
            let h = try Harness()
            defer { h.finish() }
            try Self.placeCalls(h)
            let scrape = try h.rest("GET", "/metrics")
            try #require(scrape.status == 200)

            let child = try ChildProcess("promtool", ["check", "metrics"], stdin: .pipe, stdout: .pipe, stderr: .pipe)
            try child.standardInput?.write(contentsOf: Data(scrape.response.bodyText.utf8))
            try child.standardInput?.close()
            // promtool prints its findings on stderr; read both before waiting, so neither pipe fills.
            let output =
                String(decoding: child.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
                + String(decoding: child.standardError?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            let ended = child.wait(timeout: 30)
            #expect(ended == .exited(0), "promtool: \(ended.map { "\($0)" } ?? "still running")\n\(output)")
            #expect(output.isEmpty, "promtool complained:\n\(output)")
        }
    }
}
