import SignalCrypto
import SignalServer
import TestSupport
import Testing

/// The server's TLS layer over raw sockets: the handshake however it is
/// split, its deadline, close_notify, and garbage instead of a handshake.
@Suite(.blocking) struct TLSServerTests {
    private func secureServer(_ certificate: CertificateFiles, handshakeTimeout: Double = 10) throws -> TestServer {
        try TestServer(
            config: testConfig {
                $0.tlsCertificatePath = certificate.certificatePath
                $0.tlsPrivateKeyPath = certificate.privateKeyPath
                $0.handshakeTimeout = handshakeTimeout
            })
    }

    @Test func aResponseEndsWithCloseNotifyBeforeTheTCPClose() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        let server = try secureServer(certificate)
        defer { server.stop() }
        let client = try TLSTestClient(port: server.port, trusting: certificate)
        try client.handshake()
        #expect(client.session.applicationProtocol == "http/1.1")
        try client.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        try client.readUntilEOF()
        let response = String(decoding: client.plaintext, as: UTF8.self)
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(response.contains("\"status\":\"ok\""))
        #expect(client.sawCloseNotify)
    }

    @Test func aHandshakeArrivingByteByByteCompletes() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        let server = try secureServer(certificate)
        defer { server.stop() }
        let client = try TLSTestClient(port: server.port, trusting: certificate)
        try client.handshake(byteByByte: true)
        try client.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let deadline = monotonicSeconds() + 5
        while !String(decoding: client.plaintext, as: UTF8.self).contains("\"status\":\"ok\"") {
            guard try client.receive(until: deadline) else {
                Issue.record("the server closed before answering")
                return
            }
        }
    }

    @Test func aStalledHandshakeIsDroppedAtTheHandshakeTimeout() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        let server = try secureServer(certificate, handshakeTimeout: 0.3)
        defer { server.stop() }
        let silent = try TestSocket(port: server.port)
        let partial = try TLSTestClient(port: server.port, trusting: certificate)
        _ = try partial.session.handshake()
        let hello = try #require(partial.session.takeOutput())
        try partial.socket.send(Array(hello.prefix(hello.count / 2)))
        let start = monotonicSeconds()
        #expect(silent.closesWithin(5))
        #expect(partial.socket.closesWithin(5))
        #expect(monotonicSeconds() - start < 3)
        #expect(try healthOverTLS(port: server.port, certificate))
    }

    @Test func garbageInsteadOfAHandshakeIsClosedAndHarmsNoOne() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        let server = try secureServer(certificate)
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        try socket.send([22, 3, 1, 0, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        let received = try socket.readUntilEOF()
        // An alert record (type 21) tells the peer why, then the close.
        #expect(received.first == 21)
        #expect(try healthOverTLS(port: server.port, certificate))
    }

    /// Whether a fresh TLS client gets a healthy `/healthz`.
    private func healthOverTLS(port: Int, _ certificate: CertificateFiles) throws -> Bool {
        let client = try TLSTestClient(port: port, trusting: certificate)
        try client.handshake()
        try client.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        try client.readUntilEOF()
        return String(decoding: client.plaintext, as: UTF8.self).contains("\"status\":\"ok\"")
    }
}
