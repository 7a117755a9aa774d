import SignalCrypto
import TestSupport
import Testing

/// Client and server sessions talking through memory only: the handshake,
/// records both ways, close_notify, and every way verification fails.
@Suite(.blocking) final class TLSSessionTests {
    private var certificate: CertificateFiles

    init() throws {
        certificate = try CertificateFiles()
    }

    deinit {
        certificate.remove()
    }

    /// Moves output between the two sessions until neither has any, reading
    /// plaintext on both sides; returns what each side read.
    @discardableResult
    private func pump(_ client: TLSSession, _ server: TLSSession) throws -> (client: [UInt8], server: [UInt8]) {
        var read: ([UInt8], [UInt8]) = ([], [])
        var buffer = [UInt8](repeating: 0, count: 32 * 1024)
        for _ in 0 ..< 20 {
            var moved = false
            if let bytes = client.takeOutput() {
                bytes.withUnsafeBytes { server.receive($0) }
                moved = true
            }
            if let bytes = server.takeOutput() {
                bytes.withUnsafeBytes { client.receive($0) }
                moved = true
            }
            for (session, index) in [(client, 0), (server, 1)] {
                while case .plaintext(let count) = try buffer.withUnsafeMutableBytes({ try session.read(into: $0) }) {
                    if index == 0 { read.0 += buffer[0 ..< count] } else { read.1 += buffer[0 ..< count] }
                }
            }
            if !moved { break }
        }
        return read
    }

    private func connect(clientContext: TLSContext, serverName: String = "localhost") throws -> (TLSSession, TLSSession)
    {
        let client = try TLSSession(context: clientContext, serverName: serverName)
        let server = try TLSSession(context: try certificate.serverContext())
        #expect(try !client.handshake())
        try pump(client, server)
        return (client, server)
    }

    @Test func handshakeThenRecordsBothWays() throws {
        let (client, server) = try connect(clientContext: try certificate.clientContext())
        #expect(client.isHandshakeComplete && server.isHandshakeComplete)
        #expect(client.protocolVersion == "TLSv1.3")
        #expect(client.applicationProtocol == "http/1.1")
        #expect(server.applicationProtocol == "http/1.1")

        let request = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        let large = (0 ..< 50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try request.withUnsafeBytes { try client.write($0) }
        try large.withUnsafeBytes { try server.write($0) }
        let read = try pump(client, server)
        #expect(read.server == request)
        #expect(read.client == large)
    }

    @Test func drainedBuffersDoNotKeepALargeMessagesSize() throws {
        let (client, server) = try connect(clientContext: try certificate.clientContext())
        let large = [UInt8](repeating: 7, count: 256 * 1024)
        try large.withUnsafeBytes { try client.write($0) }
        #expect(client.bufferCapacity > large.count)
        #expect(try pump(client, server).server.count == large.count)
        #expect(client.bufferCapacity <= 2 * TLSSession.idleBufferLimit)
        #expect(server.bufferCapacity <= 2 * TLSSession.idleBufferLimit)
    }

    @Test func anIPAddressIsCheckedAgainstTheCertificatesAddresses() throws {
        let (client, _) = try connect(clientContext: try certificate.clientContext(), serverName: "127.0.0.1")
        #expect(client.isHandshakeComplete)
    }

    @Test func closeNotifyEndsThePeersReads() throws {
        let (client, server) = try connect(clientContext: try certificate.clientContext())
        server.close()
        let bytes = try #require(server.takeOutput())
        bytes.withUnsafeBytes { client.receive($0) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        #expect(try buffer.withUnsafeMutableBytes { try client.read(into: $0) } == .closed)
    }

    @Test func feedingByteByByteCompletesTheHandshake() throws {
        let client = try TLSSession(context: try certificate.clientContext(), serverName: "localhost")
        let server = try TLSSession(context: try certificate.serverContext())
        var buffer = [UInt8](repeating: 0, count: 1024)
        _ = try client.handshake()
        for _ in 0 ..< 10 where !(client.isHandshakeComplete && server.isHandshakeComplete) {
            for (from, to) in [(client, server), (server, client)] {
                for byte in from.takeOutput() ?? [] {
                    [byte].withUnsafeBytes { to.receive($0) }
                    #expect(try buffer.withUnsafeMutableBytes { try to.read(into: $0) } == .needsInput)
                }
            }
        }
        #expect(client.isHandshakeComplete && server.isHandshakeComplete)
    }

    private func expectVerificationFailure(
        clientContext: TLSContext, serverName: String = "localhost",
        containing reason: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let error = #expect(throws: TLSError.self, sourceLocation: sourceLocation) {
            try self.connect(clientContext: clientContext, serverName: serverName)
        }
        #expect(
            error?.code == TLSError.verificationCode, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.message.contains(reason) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    @Test func anotherCertificateAsCAFails() throws {
        let other = try CertificateFiles()
        defer { other.remove() }
        try expectVerificationFailure(clientContext: try other.clientContext(), containing: "self-signed certificate")
    }

    @Test func theSystemRootsDoNotTrustADevelopmentCertificate() throws {
        try expectVerificationFailure(
            clientContext: try TLSContext.client(verification: .systemRoots),
            containing: "self-signed certificate")
    }

    @Test func anExpiredCertificateFails() throws {
        certificate.remove()
        certificate = try CertificateFiles(validFrom: -7200, validUntil: -3600)
        try expectVerificationFailure(clientContext: try certificate.clientContext(), containing: "expired")
    }

    @Test func anotherHostNameFails() throws {
        try expectVerificationFailure(
            clientContext: try certificate.clientContext(), serverName: "example.org",
            containing: "mismatch")
    }

    @Test func noVerificationAcceptsAnyCertificate() throws {
        let (client, _) = try connect(
            clientContext: try TLSContext.client(verification: .none), serverName: "example.org")
        #expect(client.isHandshakeComplete)
    }

    @Test func withoutVerificationAFailureIsNotBlamedOnTheCertificate() throws {
        let client = try TLSSession(context: try TLSContext.client(verification: .none), serverName: "localhost")
        let server = try TLSSession(context: try certificate.serverContext())
        _ = try client.handshake()
        try #require(client.takeOutput()).withUnsafeBytes { server.receive($0) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = try buffer.withUnsafeMutableBytes { try server.read(into: $0) }
        // The server's flight with its last byte (inside Finished) corrupted:
        // the certificate is seen (and, unverified, found self-signed) first.
        var flight = try #require(server.takeOutput())
        flight[flight.count - 1] ^= 0xFF
        flight.withUnsafeBytes { client.receive($0) }
        let error = #expect(throws: TLSError.self) { try buffer.withUnsafeMutableBytes { try client.read(into: $0) } }
        #expect(error?.code == TLSError.handshakeCode, "\(String(describing: error))")
    }

    @Test func plainTextIsNotAHandshake() throws {
        let server = try TLSSession(context: try certificate.serverContext())
        Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { server.receive($0) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let error = #expect(throws: TLSError.self) { try buffer.withUnsafeMutableBytes { try server.read(into: $0) } }
        #expect(error?.code == TLSError.handshakeCode, "\(String(describing: error))")
    }

    @Test func serverContextErrorsNameTheFile() throws {
        let missing = certificate.directory.path + "/missing.pem"
        for (certificatePath, keyPath, expected) in [
            (missing, certificate.privateKeyPath, missing),
            (certificate.certificatePath, missing, missing),
            (certificate.privateKeyPath, certificate.privateKeyPath, certificate.privateKeyPath),
        ] {
            let error = #expect(throws: TLSError.self) {
                try TLSContext.server(certificatePath: certificatePath, privateKeyPath: keyPath)
            }
            #expect(error?.code == TLSError.configurationCode)
            #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        }
        let other = try CertificateFiles()
        defer { other.remove() }
        let mismatch = #expect(throws: TLSError.self) {
            try TLSContext.server(
                certificatePath: self.certificate.certificatePath, privateKeyPath: other.privateKeyPath)
        }
        #expect(mismatch?.message.contains("does not match") == true, "\(String(describing: mismatch))")
    }
}
