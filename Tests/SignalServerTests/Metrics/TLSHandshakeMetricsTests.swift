import SignalCrypto
import SignalServer
import TestSupport
import Testing

@Suite("Metrics: TLS handshakes", .blocking)
struct TLSHandshakeMetricsTests {
    @Test("a completed handshake counts as ok, garbage instead of one as failed")
    func counted() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        let server = try TestServer(
            config: testConfig {
                $0.tlsCertificatePath = certificate.certificatePath
                $0.tlsPrivateKeyPath = certificate.privateKeyPath
            })
        defer { server.stop() }
        let client = try TLSTestClient(port: server.port, trusting: certificate)
        try client.handshake()
        try client.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        try client.readUntilEOF()
        let garbage = try TestSocket(port: server.port)
        try garbage.send([22, 3, 1, 0, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        _ = try garbage.readUntilEOF()

        let stats = server.server.stats
        #expect(waitUntil(timeout: 5) { stats.tlsHandshakes == (1, 1) }, "\(stats.tlsHandshakes)")
    }
}
