import SignalProtocol
import Testing

@testable import SignalServer

@Suite("Metrics: Prometheus text format")
struct PrometheusTextTests {
    @Test("a small registry renders byte for byte, histogram buckets cumulative")
    func smallRegistry() {
        let histogram = Histogram(bounds: [0.25, 1])
        for value in [0.125, 0.25, 0.5, 3] { histogram.observe(value) }
        var text = PrometheusText()
        text.single("ringd_up", .gauge, "Whether it is up.", 1)
        text.family("ringd_errors_total", .counter, "Errors, by code.\nSecond line with a \\.")
        text.sample("ringd_errors_total", [("code", "ERR_\"X\"\\\n")], 3)
        text.family("ringd_wait_seconds", .histogram, "Waits.")
        text.histogram("ringd_wait_seconds", bounds: histogram.bounds, histogram.snapshot)
        #expect(
            text.text == """
                # HELP ringd_up Whether it is up.
                # TYPE ringd_up gauge
                ringd_up 1
                # HELP ringd_errors_total Errors, by code.\\nSecond line with a \\\\.
                # TYPE ringd_errors_total counter
                ringd_errors_total{code="ERR_\\"X\\"\\\\\\n"} 3
                # HELP ringd_wait_seconds Waits.
                # TYPE ringd_wait_seconds histogram
                ringd_wait_seconds_bucket{le="0.25"} 2
                ringd_wait_seconds_bucket{le="1"} 3
                ringd_wait_seconds_bucket{le="+Inf"} 4
                ringd_wait_seconds_sum 3.875
                ringd_wait_seconds_count 4

                """)
    }

    @Test("values: whole numbers exact, fractions as Swift prints them, infinities")
    func values() {
        #expect(PrometheusText.format(0) == "0")
        #expect(PrometheusText.format(1_234_567) == "1234567")
        #expect(PrometheusText.format(0.0025) == "0.0025")
        #expect(PrometheusText.format(.infinity) == "+Inf")
        #expect(PrometheusText.format(-.infinity) == "-Inf")
        #expect(PrometheusText.format(.nan) == "NaN")
    }

    @Test("/proc/self/stat fields start after the command name, whatever it holds")
    func statFields() throws {
        let fields = try #require(ProcessMetrics.statFields("42 (a) b (c)) S 1 2 3"))
        #expect(fields == ["S", "1", "2", "3"])
        let process = try #require(ProcessMetrics.read())
        #expect(process.residentBytes > 0 && process.openFDs > 0 && process.cpuSeconds > 0)
        #expect((process.startTimeSeconds ?? 0) > 1_700_000_000)
    }

    @Test("transitions by status and reason; ring and setup latency from the call's timestamps")
    func callMetrics() {
        let metrics = SignalingMetrics(wall: { 10_500 })
        let ringing = Call(
            sessionId: "s1", callType: .audio, status: .initiated, initiator: "a", receiver: "b",
            initiatedAt: 8_000, timeoutMs: 30_000)
        var ongoing = ringing
        ongoing.status = .ongoing
        ongoing.acceptedAt = 10_000
        var ended = ongoing
        ended.status = .ended
        ended.endReason = .hangup
        metrics.committed([
            .created(ringing, by: .server),
            CallChange(before: ringing, after: ongoing, transition: .accept(deviceId: "b1"), actor: .server),
        ])
        metrics.committed([CallChange(before: ongoing, after: ended, transition: .hangUp, actor: .server)])
        #expect(
            metrics.transitionTotals == [
                .init(status: .initiated, reason: nil): 1, .init(status: .ongoing, reason: nil): 1,
                .init(status: .ended, reason: .hangup): 1,
            ])
        #expect(metrics.ringSeconds.snapshot.sum == 2 && metrics.ringSeconds.snapshot.count == 1)
        #expect(metrics.setupSeconds.snapshot.sum == 2.5)
        metrics.countError(.rateLimited)
        metrics.countError(.rateLimited)
        metrics.countError(SignalErrorCode(rawValue: "ERR_NEW"))
        #expect(metrics.errorTotals.map { "\($0.code)=\($0.count)" } == ["ERR_NEW=1", "ERR_RATE_LIMITED=2"])
    }
}
