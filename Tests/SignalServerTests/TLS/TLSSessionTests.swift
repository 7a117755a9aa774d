import SignalCrypto
import XCTest

/// Client and server sessions talking through memory only: the handshake,
/// records both ways, close_notify, and every way verification fails.
final class TLSSessionTests: XCTestCase {
    private var certificate: TestCertificate!

    override func setUpWithError() throws {
        certificate = try TestCertificate()
    }

    override func tearDown() {
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

    private func connect(clientContext: TLSContext, serverName: String = "localhost") throws -> (TLSSession, TLSSession) {
        let client = try TLSSession(context: clientContext, serverName: serverName)
        let server = try TLSSession(context: try certificate.serverContext())
        XCTAssertFalse(try client.handshake())
        try pump(client, server)
        return (client, server)
    }

    func testHandshakeThenRecordsBothWays() throws {
        let (client, server) = try connect(clientContext: try certificate.clientContext())
        XCTAssertTrue(client.isHandshakeComplete)
        XCTAssertTrue(server.isHandshakeComplete)
        XCTAssertEqual(client.protocolVersion, "TLSv1.3")
        XCTAssertEqual(client.applicationProtocol, "http/1.1")
        XCTAssertEqual(server.applicationProtocol, "http/1.1")

        let request = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        let large = (0 ..< 50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try request.withUnsafeBytes { try client.write($0) }
        try large.withUnsafeBytes { try server.write($0) }
        let read = try pump(client, server)
        XCTAssertEqual(read.server, request)
        XCTAssertEqual(read.client, large)
    }

    func testDrainedBuffersDoNotKeepALargeMessagesSize() throws {
        let (client, server) = try connect(clientContext: try certificate.clientContext())
        let large = [UInt8](repeating: 7, count: 256 * 1024)
        try large.withUnsafeBytes { try client.write($0) }
        XCTAssertGreaterThan(client.bufferCapacity, large.count)
        XCTAssertEqual(try pump(client, server).server.count, large.count)
        XCTAssertLessThanOrEqual(client.bufferCapacity, 2 * TLSSession.idleBufferLimit)
        XCTAssertLessThanOrEqual(server.bufferCapacity, 2 * TLSSession.idleBufferLimit)
    }

    func testAnIPAddressIsCheckedAgainstTheCertificatesAddresses() throws {
        let (client, _) = try connect(clientContext: try certificate.clientContext(), serverName: "127.0.0.1")
        XCTAssertTrue(client.isHandshakeComplete)
    }

    func testCloseNotifyEndsThePeersReads() throws {
        let (client, server) = try connect(clientContext: try certificate.clientContext())
        server.close()
        let bytes = try XCTUnwrap(server.takeOutput())
        bytes.withUnsafeBytes { client.receive($0) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        XCTAssertEqual(try buffer.withUnsafeMutableBytes { try client.read(into: $0) }, .closed)
    }

    func testFeedingByteByByteCompletesTheHandshake() throws {
        let client = try TLSSession(context: try certificate.clientContext(), serverName: "localhost")
        let server = try TLSSession(context: try certificate.serverContext())
        var buffer = [UInt8](repeating: 0, count: 1024)
        _ = try client.handshake()
        for _ in 0 ..< 10 where !(client.isHandshakeComplete && server.isHandshakeComplete) {
            for (from, to) in [(client, server), (server, client)] {
                for byte in from.takeOutput() ?? [] {
                    [byte].withUnsafeBytes { to.receive($0) }
                    XCTAssertEqual(try buffer.withUnsafeMutableBytes { try to.read(into: $0) }, .needsInput)
                }
            }
        }
        XCTAssertTrue(client.isHandshakeComplete && server.isHandshakeComplete)
    }

    private func expectVerificationFailure(clientContext: TLSContext, serverName: String = "localhost",
                                           containing reason: String, file: StaticString = #filePath,
                                           line: UInt = #line) throws {
        XCTAssertThrowsError(try connect(clientContext: clientContext, serverName: serverName), file: file, line: line) { error in
            let tlsError = error as? TLSError
            XCTAssertEqual(tlsError?.code, TLSError.verificationCode, "\(error)", file: file, line: line)
            XCTAssertTrue(tlsError?.message.contains(reason) == true, "\(error)", file: file, line: line)
        }
    }

    func testAnotherCertificateAsCAFails() throws {
        let other = try TestCertificate()
        defer { other.remove() }
        try expectVerificationFailure(clientContext: try other.clientContext(), containing: "self-signed certificate")
    }

    func testTheSystemRootsDoNotTrustADevelopmentCertificate() throws {
        try expectVerificationFailure(clientContext: try TLSContext.client(verification: .systemRoots),
                                      containing: "self-signed certificate")
    }

    func testAnExpiredCertificateFails() throws {
        certificate.remove()
        certificate = try TestCertificate(validFrom: -7200, validUntil: -3600)
        try expectVerificationFailure(clientContext: try certificate.clientContext(), containing: "expired")
    }

    func testAnotherHostNameFails() throws {
        try expectVerificationFailure(clientContext: try certificate.clientContext(), serverName: "example.org",
                                      containing: "mismatch")
    }

    func testNoVerificationAcceptsAnyCertificate() throws {
        let (client, _) = try connect(clientContext: try TLSContext.client(verification: .none), serverName: "example.org")
        XCTAssertTrue(client.isHandshakeComplete)
    }

    func testWithoutVerificationAFailureIsNotBlamedOnTheCertificate() throws {
        let client = try TLSSession(context: try TLSContext.client(verification: .none), serverName: "localhost")
        let server = try TLSSession(context: try certificate.serverContext())
        _ = try client.handshake()
        try XCTUnwrap(client.takeOutput()).withUnsafeBytes { server.receive($0) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = try buffer.withUnsafeMutableBytes { try server.read(into: $0) }
        // The server's flight with its last byte (inside Finished) corrupted:
        // the certificate is seen (and, unverified, found self-signed) first.
        var flight = try XCTUnwrap(server.takeOutput())
        flight[flight.count - 1] ^= 0xFF
        flight.withUnsafeBytes { client.receive($0) }
        XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try client.read(into: $0) }) { error in
            XCTAssertEqual((error as? TLSError)?.code, TLSError.handshakeCode, "\(error)")
        }
    }

    func testPlainTextIsNotAHandshake() throws {
        let server = try TLSSession(context: try certificate.serverContext())
        Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8).withUnsafeBytes { server.receive($0) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try server.read(into: $0) }) { error in
            XCTAssertEqual((error as? TLSError)?.code, TLSError.handshakeCode, "\(error)")
        }
    }

    func testServerContextErrorsNameTheFile() throws {
        let missing = certificate.directory.path + "/missing.pem"
        for (certificatePath, keyPath, expected) in [
            (missing, certificate.privateKeyPath, missing),
            (certificate.certificatePath, missing, missing),
            (certificate.privateKeyPath, certificate.privateKeyPath, certificate.privateKeyPath),
        ] {
            XCTAssertThrowsError(try TLSContext.server(certificatePath: certificatePath, privateKeyPath: keyPath)) { error in
                XCTAssertEqual((error as? TLSError)?.code, TLSError.configurationCode)
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        let other = try TestCertificate()
        defer { other.remove() }
        XCTAssertThrowsError(try TLSContext.server(certificatePath: certificate.certificatePath,
                                                   privateKeyPath: other.privateKeyPath)) { error in
            XCTAssertTrue("\(error)".contains("does not match"), "\(error)")
        }
    }
}
