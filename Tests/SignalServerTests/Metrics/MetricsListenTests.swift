import Testing

@testable import SignalServer

@Suite("Metrics: the metrics.listen key")
struct MetricsListenTests {
    @Test("host:port, [v6]:port or null; anything else is refused naming the key")
    func parsing() throws {
        #expect(try loadConfig("{}").get().metricsListen == nil)
        #expect(try loadConfig(#"{"metrics": {"listen": null}}"#).get().metricsListen == nil)
        #expect(
            try loadConfig(#"{"metrics": {"listen": "127.0.0.1:9464"}}"#).get().metricsListen
                == HostPort(host: "127.0.0.1", port: 9464))
        #expect(
            try loadConfig(#"{"metrics": {"listen": "[::1]:0"}}"#).get().metricsListen == HostPort(host: "::1", port: 0)
        )
        #expect(
            try loadConfig("{}", environment: ["RINGD_METRICS_LISTEN": "localhost:9464"]).get().metricsListen
                == HostPort(host: "localhost", port: 9464))
        for bad in [#""9464""#, #"":9464""#, #""host:""#, #""host:65536""#, #""host:-1""#, "9464", "true"] {
            #expect(try configError(#"{"metrics": {"listen": \#(bad)}}"#).contains("metrics.listen"), "\(bad)")
        }
        #expect(HostPort(host: "::1", port: 9464).description == "[::1]:9464")
    }
}
