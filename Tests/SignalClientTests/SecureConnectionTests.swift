import SignalClient
import SignalCrypto
import SignalProtocol
import SignalServer
import TestSupport
import Testing

@Suite("wss:// and https:// against a real ringd, OpenSSL on both sides", .prompt)
struct SecureConnectionTests {
    /// Runs `body` against a server with `files` as its certificate, TLS
    /// alone on the port unless `sideBySide`.
    private func withSecureRingd(
        _ files: CertificateFiles, sideBySide: Bool = false,
        _ body: (RingdFixture) async throws -> Void
    ) async throws {
        try await withRingd(
            { config in
                config.tlsCertificatePath = files.certificatePath
                config.tlsPrivateKeyPath = files.privateKeyPath
                config.tlsPort = sideBySide ? 0 : nil
            }, body)
    }

    @Test("a call over wss://: ring, accept, end, both sides on one session; https:// health")
    func callOverTLS() async throws {
        let files = try CertificateFiles()
        defer { files.remove() }
        try await withSecureRingd(files) { ringd in
            #expect(ringd.endpoint.isSecure)
            #expect(ringd.server.url.hasPrefix("wss://"))
            let alice = try await ringd.connect("alice", verification: files.trusted)
            let bob = try await ringd.connect("bob", verification: files.trusted)
            let bobStreams = ClientStreams(bob)
            let call = try await alice.initiateCall(to: "bob", type: .audio).call
            #expect(try await bobStreams.nextCall().sessionId == call.sessionId)
            let accepted = try await bob.acceptCall(call.sessionId)
            #expect(accepted.sessionId == call.sessionId && accepted.status == .ongoing)
            #expect(try await alice.endCall(call.sessionId).status == .ended)

            var rest = ringd.rest
            rest.tlsVerification = files.trusted
            #expect(try await rest.health()["status"] == .string("ok"))
            await alice.close()
            await bob.close()
        }
    }

    @Test("permessage-deflate inside TLS: a call with metadata large enough to be compressed")
    func compressionInsideTLS() async throws {
        let files = try CertificateFiles()
        defer { files.remove() }
        try await withRingd({ config in
            config.tlsCertificatePath = files.certificatePath
            config.tlsPrivateKeyPath = files.privateKeyPath
            config.compression = true
        }) { ringd in
            var options = ConnectOptions(compression: true)
            options.tlsVerification = files.trusted
            let alice = try await SignalClient.connect(
                to: ringd.endpoint, credentials: .authKey(uid: "alice", key: RingdFixture.authKey),
                options: options)
            let bob = try await SignalClient.connect(
                to: ringd.endpoint, credentials: .authKey(uid: "bob", key: RingdFixture.authKey),
                options: options)
            #expect(alice.usesCompression && bob.usesCompression)
            let bobStreams = ClientStreams(bob)
            let metadata = JSONValue.object([("agenda", .string(String(repeating: "quarterly planning ", count: 100)))])
            let call = try await alice.initiateCall(to: "bob", type: .video, metadata: metadata).call
            let rung = try await bobStreams.nextCall()
            #expect(rung.sessionId == call.sessionId)
            #expect(rung.metadata == metadata)
            await alice.close()
            await bob.close()
        }
    }

    /// Large requests up and large answers (many TLS records each) down at
    /// once, from concurrent tasks sharing one connection.
    @Test("large messages both ways over wss://, concurrently: every request is answered")
    func heavyTrafficBothWays() async throws {
        let files = try CertificateFiles()
        defer { files.remove() }
        try await withSecureRingd(files) { ringd in
            let alice = try await ringd.connect("alice", verification: files.trusted)
            let bob = try await ringd.connect("bob", verification: files.trusted)
            let metadata = JSONValue.object([("notes", .string(String(repeating: "x", count: 4000)))])
            for _ in 0 ..< 40 {
                let call = try await alice.initiateCall(to: "bob", type: .audio, metadata: metadata).call
                _ = try await alice.cancelCall(call.sessionId)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0 ..< 10 {
                    group.addTask {
                        let page = try await alice.getCallLogs(CallLogFilter(limit: 40))
                        #expect(page.logs.count == 40)
                        #expect(page.logs.allSatisfy { $0.call.metadata == metadata })
                    }
                }
                for _ in 0 ..< 200 {
                    group.addTask {
                        let error = try await clientError {
                            try await alice.initiateCall(to: "alice", type: .audio, metadata: metadata)
                        }
                        #expect(error.code == .server(.callingSelf))
                    }
                }
                try await group.waitForAll()
            }
            await alice.close()
            await bob.close()
        }
    }

    @Test("plain text and TLS side by side on two ports")
    func sideBySide() async throws {
        let files = try CertificateFiles()
        defer { files.remove() }
        try await withSecureRingd(files, sideBySide: true) { ringd in
            let secure = try #require(ringd.server.secureAddress)
            #expect(!ringd.endpoint.isSecure)
            #expect(ringd.server.listeners.map(\.isSecure) == [false, true])
            let plain = try await ringd.connect("alice")
            #expect(!plain.usesCompression, "not offered, not agreed")
            let tls = try await ringd.connect(
                "bob", endpoint: ServerEndpoint(host: "127.0.0.1", port: secure.port, isSecure: true),
                verification: files.trusted)
            let bobStreams = ClientStreams(tls)
            let call = try await plain.initiateCall(to: "bob", type: .video).call
            #expect(try await bobStreams.nextCall().sessionId == call.sessionId)
            await plain.close()
            await tls.close()
        }
    }

    /// The server still serves a trusting client after a failed handshake.
    private func expectStillServing(_ ringd: RingdFixture, _ files: CertificateFiles) async throws {
        let client = try await ringd.connect("carol", verification: files.trusted)
        #expect(try await client.getActiveCall() == nil)
        await client.close()
    }

    @Test("a certificate the client does not trust: CLIENT_TLS naming why, and the server keeps serving")
    func untrusted() async throws {
        let files = try CertificateFiles()
        let stranger = try CertificateFiles()
        defer { files.remove(); stranger.remove() }
        try await withSecureRingd(files) { ringd in
            let error = try await clientError { try await ringd.connect("alice", verification: stranger.trusted) }
            #expect(error.code == .tlsFailed)
            #expect(error.message.contains("did not verify: self-signed certificate"))
            try await expectStillServing(ringd, files)
        }
    }

    @Test("an expired certificate: CLIENT_TLS saying so; --insecure still connects")
    func expired() async throws {
        let files = try CertificateFiles(validFrom: -7200, validUntil: -3600)
        defer { files.remove() }
        try await withSecureRingd(files) { ringd in
            let error = try await clientError { try await ringd.connect("alice", verification: files.trusted) }
            #expect(error.code == .tlsFailed)
            #expect(error.message.contains("expired"))
            let insecure = try await ringd.connect("alice", verification: .none)
            #expect(try await insecure.getActiveCall() == nil)
            await insecure.close()
        }
    }

    @Test("a plain client on the TLS port gets HTTP 400 naming wss://")
    func plainOnTLSPort() async throws {
        let files = try CertificateFiles()
        defer { files.remove() }
        try await withSecureRingd(files) { ringd in
            let plain = ServerEndpoint(host: "127.0.0.1", port: ringd.endpoint.port)
            let error = try await clientError { try await ringd.connect("alice", endpoint: plain) }
            #expect(error.code == .handshakeFailed)
            #expect(error.httpStatus == 400)
            #expect(error.message.contains("use wss://"))
            try await expectStillServing(ringd, files)
        }
    }

    @Test("a TLS client on a plain port is told that port does not speak TLS")
    func tlsOnPlainPort() async throws {
        try await withRingd { ringd in
            let secure = ServerEndpoint(host: "127.0.0.1", port: ringd.endpoint.port, isSecure: true)
            let error = try await clientError {
                try await ringd.connect("alice", endpoint: secure, verification: .none)
            }
            #expect(error.code == .tlsFailed)
            #expect(error.message.contains("does not speak TLS"))
        }
    }

    @Test("a reload serves the new certificate to new connections and keeps live ones")
    func reload() async throws {
        let files = try CertificateFiles()
        defer { files.remove() }
        let oldCA = TLSVerification.caFile(try files.keepCertificate(as: "old.pem"))
        try await withSecureRingd(files) { ringd in
            let alice = try await ringd.connect("alice", verification: oldCA)
            try files.replace()
            try #require(ringd.server.certificates).reload()

            let bob = try await ringd.connect("bob", verification: files.trusted)
            let refused = try await clientError { try await ringd.connect("carol", verification: oldCA) }
            #expect(refused.code == .tlsFailed)
            let bobStreams = ClientStreams(bob)
            let call = try await alice.initiateCall(to: "bob", type: .audio).call
            #expect(try await bobStreams.nextCall().sessionId == call.sessionId)
            await alice.close()
            await bob.close()
        }
    }

    @Test("a reload from a bad file fails naming it and keeps the previous certificate")
    func failedReload() async throws {
        let files = try CertificateFiles()
        defer { files.remove() }
        try await withSecureRingd(files) { ringd in
            try "not a certificate".write(toFile: files.certificatePath, atomically: true, encoding: .utf8)
            let certificates = try #require(ringd.server.certificates)
            let error = try #require(throws: TLSError.self) { try certificates.reload() }
            #expect(error.code == TLSError.configurationCode)
            #expect(error.message.contains(files.certificatePath))
            try files.replace()
            let stillOld = try await clientError { try await ringd.connect("alice", verification: files.trusted) }
            #expect(stillOld.code == .tlsFailed)
        }
    }
}
