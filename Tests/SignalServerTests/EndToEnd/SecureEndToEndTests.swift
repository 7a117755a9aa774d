import Foundation
import SignalServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ringd gen-cert`, then `ringd` serving TLS and `ringctl` over `wss://`
/// as separate processes, and SIGHUP renewing the certificate.
@Suite("EndToEnd: wss://", .blocking)
struct SecureEndToEndTests {
    /// Runs `ringd gen-cert` with the store (so the data directory) in `directory`.
    private func generateCertificate(
        in directory: String, force: Bool = false
    ) throws -> (status: Int32?, output: String) {
        let ended = try RingdProcess.run(
            ["gen-cert", "--config", directory + "/config.json"] + (force ? ["--force"] : []),
            replacing: ["RINGD_STORE_PATH": directory + "/ringd.sqlite", "PATH": "/usr/bin:/bin"],
            stdout: .file(directory + "/gen-cert.out"), stderr: .file(directory + "/gen-cert.err"))
        guard case .exited(let status)? = ended else { return (nil, "") }
        let output = (try? String(contentsOfFile: directory + "/gen-cert.out", encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: directory + "/gen-cert.err", encoding: .utf8)) ?? ""
        return (status, output + errors)
    }

    @Test("gen-cert, a call over wss:// with --ca-file, and a SIGHUP renewal that keeps the live device")
    func callOverTLSAndRenewal() throws {
        let directory = "/tmp/ringd-tls-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "{}".write(toFile: directory + "/config.json", atomically: true, encoding: .utf8)
        let certificate = directory + "/" + DevelopmentCertificate.certificateName
        let key = directory + "/" + DevelopmentCertificate.privateKeyName

        let generated = try generateCertificate(in: directory)
        #expect(generated.status == 0, "\(generated.output)")
        #expect(generated.output.contains(certificate))
        var info = stat()
        #expect(stat(key, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let first = try String(contentsOfFile: certificate, encoding: .utf8)
        let again = try generateCertificate(in: directory)
        #expect(again.status == 0, "running it twice is not a mistake: \(again.output)")
        #expect(again.output.contains("kept the existing") && again.output.contains("--force"))
        #expect(try String(contentsOfFile: certificate, encoding: .utf8) == first, "the certificate is kept")

        try withRingd(
            environment: [
                "RINGD_TLS_CERTIFICATE": certificate, "RINGD_TLS_PRIVATE_KEY": key,
                "RINGD_AUTH_ALLOW_DEVELOPMENT_KEYS": "true",
            ],
            directory: directory
        ) { ringd in
            let server = "wss://localhost:\(ringd.port)"
            func ringctl(_ arguments: [String], trusting ca: String? = certificate) throws -> RingctlProcess {
                try RingctlProcess((ca.map { ["--ca-file", $0] } ?? []) + arguments, port: ringd.port, server: server)
            }

            let untrusted = try ringctl(["status"], trusting: nil)
            #expect(untrusted.exitStatus() == 1)
            #expect(untrusted.errorOutput.contains("did not verify"), "\(untrusted.errorOutput)")

            // Bob's device connects with the first certificate and stays through the renewal.
            let bob = try ringctl(["--as", "bob", "--json", "answer", "--once", "--auto-accept", "--hangup-after", "1"])
            #expect(bob.waitForEvent("waiting") != nil, "\(bob.errorOutput)")
            let oldCertificate = directory + "/old-cert.pem"
            try FileManager.default.copyItem(atPath: certificate, toPath: oldCertificate)
            #expect(try generateCertificate(in: directory, force: true).status == 0)
            ringd.signal(SIGHUP)
            #expect(waitUntil(timeout: 10) { ringd.log.contains("reloaded the TLS certificate") }, "\(ringd.log)")

            let stale = try ringctl(["status"], trusting: oldCertificate)
            #expect(stale.exitStatus() == 1, "the old certificate is still served")
            let alice = try ringctl(["--as", "alice", "--json", "call", "bob"])
            #expect(alice.exitStatus() == 0, "\(alice.errorOutput)")
            #expect(bob.exitStatus() == 0, "\(bob.errorOutput)")
            let session = alice.waitForEvent("connected", timeout: 0)?["sessionId"]?.stringValue
            #expect(session != nil)
            #expect(bob.waitForEvent("connected", timeout: 0)?["sessionId"]?.stringValue == session)
        }
    }
}
