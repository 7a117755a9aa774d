import Foundation
import SignalProtocol
import SignalServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// The credentials `getIceServers` mints, against a real coturn
    /// (`use-auth-secret`, Debian's `coturn`, which `make test` installs) on
    /// loopback: its own client, `turnutils_uclient`, allocates a relay and
    /// sends through it with them; a tampered password and an expired
    /// username are refused.
    @Suite("SignalingIntegration: TURN credentials against coturn", .blocking)
    struct CoturnCredentialTests {
        static let secret = "coturn-shared-secret-for-tests"

        @Test("coturn relays for the minted credentials and refuses altered or expired ones")
        func coturnAcceptsMintedCredentials() throws {
            let turnserver = "/usr/bin/turnserver", client = "/usr/bin/turnutils_uclient"
            try #require(
                FileManager.default.isExecutableFile(atPath: turnserver), "coturn is not installed (make deps)")
            let ports = try freePorts(1)
            let port = ports[0]
            let h = try Harness { config in
                config.webrtc.iceServers = [IceServer(urls: ["turn:127.0.0.1:\(port)?transport=tcp"])]
                config.webrtc.turnSecret = Self.secret
            }
            defer { h.finish() }
            let coturn = try Self.startCoturn(turnserver, port: port)
            defer {
                // SIGKILL: a child of the test process inherits its blocked
                // SIGTERM (TestServer.prepareProcess), and coturn keeps nothing.
                kill(coturn.processIdentifier, SIGKILL)
                coturn.waitUntilExit()
            }
            try Self.waitUntilListening(port: port)

            let reply = try h.device("alice", "a1").request("getIceServers")
            let server = try #require(reply.data?["iceServers"]?[0], "\(reply)")
            let username = try #require(server["username"]?.stringValue)
            let credential = try #require(server["credential"]?.stringValue)

            let accepted = try Command.run(client, Self.clientArguments(username, credential, port: port))
            #expect(accepted.status == 0, "\(accepted.output)")
            #expect(accepted.output.contains("Total lost packets 0 "), "\(accepted.output)")

            let tampered = try Command.run(
                client, Self.clientArguments(username, "A" + credential.dropFirst(), port: port))
            #expect(
                tampered.status != 0 && tampered.output.contains("Cannot complete Allocation"), "\(tampered.output)")

            // A username whose expiry passed, signed correctly: coturn checks the time itself.
            let expired = "\(Int64(Date.now.timeIntervalSince1970) - 10):alice"
            let expiredPassword = try SignalRelayTests.opensslHMACSHA1(key: Self.secret, message: expired)
            let late = try Command.run(client, Self.clientArguments(expired, expiredPassword, port: port))
            #expect(late.status != 0 && late.output.contains("Cannot complete Allocation"), "\(late.output)")
        }

        /// Client-to-client through the relay over TCP, five small messages:
        /// no peer of our own is needed.
        static func clientArguments(_ username: String, _ password: String, port: Int) -> [String] {
            [
                "-t", "-y", "-u", username, "-w", password, "-p", String(port), "-n", "5", "-m", "1", "-l", "100",
                "127.0.0.1",
            ]
        }

        static func startCoturn(_ path: String, port: Int) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = [
                "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
                "--use-auth-secret", "--static-auth-secret=\(secret)", "--realm=ringd.test",
                "--allow-loopback-peers", "--no-cli", "--no-tls", "--no-dtls", "--fingerprint",
                "--min-port=50200", "--max-port=50299", "--log-file=stdout", "--simple-log",
                "--pidfile=/dev/null",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }

        /// Connects to coturn's TCP listener until it accepts, for 10 s at most.
        static func waitUntilListening(port: Int) throws {
            let deadline = Date.now.addingTimeInterval(10)
            while Date.now < deadline {
                if let socket = try? TestSocket(port: port) {
                    socket.close()
                    return
                }
                usleep(20_000)
            }
            throw ClientError("coturn did not listen on \(port) within 10 s")
        }
    }
}
