import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

extension SignalingIntegration {
    /// The real `ringd` on sockets `systemd-socket-activate` holds: killed
    /// and started again under load with no connect refused, TLS on a socket
    /// named `tls`, and a clear error for a descriptor that cannot serve.
    @Suite("SignalingIntegration: socket activation (ringd binary)", .blocking)
    struct SocketActivationTests {
        static let pairs = 4
        static let kills = 3
        /// Calls completed on each run before the next kill (and after the last).
        static let callsPerRun = 100

        static func environment(_ directory: TemporaryDirectory) -> [String: String] {
            ["RINGD_STORE_PATH": directory.file("ringd.sqlite"), "RINGD_THREADS": "2",
             "RINGD_LIMITS_REQUESTS_PER_SECOND": "100000", "RINGD_LIMITS_REQUEST_BURST": "100000"]
        }

        @Test("kill -9 three times while pairs keep calling: no connect refused, every interrupted call placed again")
        func killAndRestartOnTheHeldSocket() throws {
            let binary = try #require(ringdBinary(), "no ringd executable among \(ringdCandidates())")
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let port = try freePorts(1)[0]
            let ringd = try ActivatedRingd(binary: binary, directory: directory.path, sockets: [(port, "web")],
                                           runs: Self.kills + 1, environment: Self.environment(directory))
            defer { ringd.stop() }
            // The pairs' first connects start ringd: they wait in the held socket's queue meanwhile.
            let callers = RestartCallers(pairs: Self.pairs, port: port)
            callers.start()
            defer { callers.stop(timeout: 20) }
            var run = try ringd.nextRun(urls: 1)
            #expect(run.urls == ["ws://127.0.0.1:\(port)"])
            for _ in 1 ... Self.kills {
                let target = callers.snapshot.completed + Self.callsPerRun
                #expect(callers.wait(timeout: 15) { $0.completed >= target || $0.failed > 0 },
                        "\(callers.snapshot); \(callers.failureList); log: \(ringd.log)")
                callers.killStarting()
                ringd.kill(run.pid)
                let next = try ringd.nextRun(urls: 1)
                callers.killDone()
                #expect(next.pid != run.pid && next.urls == run.urls)
                run = next
            }
            let target = callers.snapshot.completed + Self.callsPerRun
            let settled = callers.wait(timeout: 15) {
                ($0.completed >= target && $0.retried == $0.interrupted) || $0.failed > 0
            }
            #expect(callers.stop(timeout: 20), "the pairs did not stop")
            let counts = callers.snapshot
            print("socket activation, \(Self.kills) x kill -9 under \(Self.pairs) calling pairs: \(counts)")
            #expect(settled, "\(counts); log: \(ringd.log)")
            #expect(counts.refused == 0, "\(counts)")
            #expect(counts.failed == 0, "\(counts): \(callers.failureList)")
            #expect(counts.interrupted >= 1, "no call met a kill: \(counts)")
            #expect(counts.retried == counts.interrupted, "\(counts)")
            #expect(counts.completed >= (Self.kills + 1) * Self.callsPerRun, "\(counts)")
            let inherited = "info listening on inherited socket fd 3 \"web\" (127.0.0.1:\(port))"
            #expect(ringd.log.components(separatedBy: inherited).count - 1 == Self.kills + 1, "\(ringd.log)")
        }

        @Test("a socket named tls serves TLS, and the configured ports are neither probed nor bound")
        func tlsSocketReplacesTheConfiguredPorts() throws {
            let binary = try #require(ringdBinary(), "no ringd executable among \(ringdCandidates())")
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let certificate = try CertificateFiles()
            defer { certificate.remove() }
            // Ports in use elsewhere: configured for listen and tls, they
            // would stop ringd unless the inherited sockets replace them.
            let busy = try (listeningSocket(), listeningSocket())
            defer { close(busy.0.fd); close(busy.1.fd) }
            let picked = try freePorts(2)
            let ports = (picked[0], picked[1])
            var environment = Self.environment(directory)
            environment.merge(["RINGD_LISTEN_PORT": String(busy.0.port), "RINGD_TLS_PORT": String(busy.1.port),
                               "RINGD_TLS_CERTIFICATE": certificate.certificatePath,
                               "RINGD_TLS_PRIVATE_KEY": certificate.privateKeyPath]) { $1 }
            let ringd = try ActivatedRingd(binary: binary, directory: directory.path,
                                           sockets: [(ports.0, "web"), (ports.1, "tls")], runs: 1,
                                           environment: environment)
            defer { ringd.stop() }
            // The first connect starts ringd.
            let device = try #require(try? Device.open(port: ports.0, uid: "alice", deviceId: "a1"), "\(ringd.log)")
            defer { device.close() }
            let run = try ringd.nextRun(urls: 2)
            #expect(run.urls == ["ws://127.0.0.1:\(ports.0)", "wss://127.0.0.1:\(ports.1)"])
            #expect(try device.activeCall() == nil, "the plain socket serves")

            let client = try TLSTestClient(port: ports.1, trusting: certificate)
            try client.handshake()
            try client.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            try client.readUntilEOF()
            #expect(String(decoding: client.plaintext, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(ringd.log.contains("listening on inherited socket fd 3 \"web\" (127.0.0.1:\(ports.0))\n"), "\(ringd.log)")
            #expect(ringd.log.contains("listening on inherited socket fd 4 \"tls\" (127.0.0.1:\(ports.1)) (TLS)\n"), "\(ringd.log)")
        }

        @Test("a descriptor that is not a listening socket: exit 1 with one line naming it, before the store opens")
        func notAListeningSocket() throws {
            let binary = try #require(ringdBinary(), "no ringd executable among \(ringdCandidates())")
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let configPath = directory.file("config.json")
            try Data("{}".utf8).write(to: URL(fileURLWithPath: configPath))
            var environment = childEnvironment()
            environment.merge(Self.environment(directory)) { $1 }
            let script = #"export LISTEN_FDS=1 LISTEN_PID=$$; exec "$0" --config "$1" 3</dev/null"#
            let ringd = try ChildProcess("/bin/sh", ["-c", script, binary, configPath], environment: environment,
                                         stderr: .file(directory.file("ringd.log")))
            #expect(ringd.wait(timeout: 15) == .exited(1))
            let log = (try? String(contentsOfFile: directory.file("ringd.log"), encoding: .utf8)) ?? ""
            #expect(log == "ringd: cannot start: inherited fd 3 \"unknown\" is not a listening stream socket\n")
            #expect(!directory.contains("ringd.sqlite"))
        }
    }
}
