import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// The real `ringd` on sockets `systemd-socket-activate` holds: killed
    /// and started again under `ringbench`'s load with no connect refused, TLS on a socket
    /// named `tls`, and a clear error for a descriptor that cannot serve.
    @Suite("SignalingIntegration: socket activation (ringd binary)", .blocking)
    struct SocketActivationTests {
        static let pairs = 4
        static let kills = 3
        /// Calls/s ringbench offers: about what the pairs complete back to
        /// back here, so that at each kill nearly every pair has a call in flight.
        static let rate = 1000
        /// Seconds of load; the kills fall at a quarter, a half and three quarters of it.
        static let duration = 4.0
        /// Calls ringbench must complete at least (about 3,400 here alone, fewer beside the suite).
        static let completedFloor = 400

        static func environment(_ directory: TemporaryDirectory) -> [String: String] {
            [
                "RINGD_STORE_PATH": directory.file("ringd.sqlite"), "RINGD_THREADS": "2",
                "RINGD_LIMITS_REQUESTS_PER_SECOND": "100000", "RINGD_LIMITS_REQUEST_BURST": "100000",
            ]
        }

        @Test(
            "kill -9 three times while ringbench keeps calling: no connect refused, every interrupted call placed again"
        )
        func killAndRestartOnTheHeldSocket() throws {
            let binary = try RingdProcess.binary()
            let bench = try #require(
                Repository.executable("ringbench"),
                "no ringbench executable among \(Repository.executableCandidates("ringbench"))")
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let port = try freePorts(1)[0]
            let ringd = try ActivatedRingd(
                binary: binary, directory: directory.path, sockets: [(port, "web")],
                runs: Self.kills + 1, environment: Self.environment(directory))
            defer { ringd.stop() }
            // ringbench's first connects start ringd: they wait in the held socket's queue meanwhile.
            let started = monotonicSeconds()
            let arguments = [
                "calls", "--server", "ws://127.0.0.1:\(port)", "--reconnect", "--json", "--pairs", String(Self.pairs),
                "--rate", String(Self.rate), "--duration", String(Self.duration),
            ]
            let ringbench = try ChildProcess(
                bench, arguments, environment: childEnvironment(),
                stdout: .file(directory.file("ringbench.json")),
                stderr: .file(directory.file("ringbench.log")))
            defer { ringbench.kill() }
            let benchOutput = {
                ["json", "log"].map {
                    (try? String(contentsOfFile: directory.file("ringbench.\($0)"), encoding: .utf8)) ?? ""
                }
                .joined(separator: "\n")
            }
            var run = try ringd.nextRun(urls: 1)
            #expect(run.urls == ["ws://127.0.0.1:\(port)"])
            for kill in 1 ... Self.kills {
                // At its point of the load, once every party is connected to
                // this run (2 WebSockets a pair, and this request's own).
                let due = started + Self.duration * Double(kill) / Double(Self.kills + 1)
                let calling = waitUntil(timeout: 15) {
                    monotonicSeconds() >= due
                        && (try? healthConnections(port: port)).map { $0 > 2 * Self.pairs } == true
                }
                let state = ringbench.termination.map { "ended \($0)" } ?? "running"
                try #require(
                    calling && ringbench.isRunning,
                    "before kill \(kill): ringbench \(state), \(benchOutput()); log: \(ringd.log)")
                ringd.kill(run.pid)
                let next = try ringd.nextRun(urls: 1)
                #expect(next.pid != run.pid && next.urls == run.urls)
                run = next
            }
            let ended = ringbench.wait(timeout: Self.duration + 30)
            #expect(ended == .exited(0), "ringbench: \(ended.map { "\($0)" } ?? "still running"); \(benchOutput())")
            let report = try JSONValue.parse(
                Array(
                    ((try? String(
                        contentsOfFile: directory.file("ringbench.json"),
                        encoding: .utf8)) ?? "").utf8))
            let count = { (name: String) in report[name]?.integerValue ?? -1 }
            let (refused, failed, completed) = (count("refusedConnects"), count("failed"), count("completed"))
            let (interrupted, retried) = (count("interruptedCalls"), count("retriedCalls"))
            print(
                "socket activation, \(Self.kills) x kill -9 under ringbench calls --reconnect (\(Self.pairs) pairs, "
                    + "\(Self.rate) calls/s offered for \(Self.duration) s): refused \(refused), failed \(failed), "
                    + "completed \(completed) (\(retried) of them placed again after a reconnect), interrupted \(interrupted), "
                    + "reconnects \(count("reconnects"))")
            let counts = "\(benchOutput()); log: \(ringd.log)"
            #expect(refused == 0, "\(counts)")
            #expect(failed == 0, "\(counts)")
            #expect(interrupted >= 1, "no call met a kill: \(counts)")
            #expect(retried == interrupted, "\(counts)")
            #expect(completed >= Int64(Self.completedFloor), "\(counts)")
            let inherited = "info listening on inherited socket fd 3 \"web\" (127.0.0.1:\(port))"
            #expect(ringd.log.components(separatedBy: inherited).count - 1 == Self.kills + 1, "\(ringd.log)")
        }

        @Test("a socket named tls serves TLS, and the configured ports are neither probed nor bound")
        func tlsSocketReplacesTheConfiguredPorts() throws {
            let binary = try RingdProcess.binary()
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let certificate = try CertificateFiles()
            defer { certificate.remove() }
            // Ports in use elsewhere: configured for listen and tls, they
            // would stop ringd unless the inherited sockets replace them.
            let busy = try (boundLoopbackSocket(listening: true), boundLoopbackSocket(listening: true))
            defer { close(busy.0.fd); close(busy.1.fd) }
            let picked = try freePorts(2)
            let ports = (picked[0], picked[1])
            var environment = Self.environment(directory)
            environment.merge([
                "RINGD_LISTEN_PORT": String(busy.0.port), "RINGD_TLS_PORT": String(busy.1.port),
                "RINGD_TLS_CERTIFICATE": certificate.certificatePath,
                "RINGD_TLS_PRIVATE_KEY": certificate.privateKeyPath, "RINGD_AUTH_ALLOW_DEVELOPMENT_KEYS": "true",
            ]) { $1 }
            let ringd = try ActivatedRingd(
                binary: binary, directory: directory.path,
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
            #expect(
                ringd.log.contains("listening on inherited socket fd 3 \"web\" (127.0.0.1:\(ports.0))\n"),
                "\(ringd.log)")
            #expect(
                ringd.log.contains("listening on inherited socket fd 4 \"tls\" (127.0.0.1:\(ports.1)) (TLS)\n"),
                "\(ringd.log)")
        }

        @Test("a descriptor that is not a listening socket: exit 1 with one line naming it, before the store opens")
        func notAListeningSocket() throws {
            let binary = try RingdProcess.binary()
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let configPath = directory.file("config.json")
            try Data("{}".utf8).write(to: URL(fileURLWithPath: configPath))
            var environment = childEnvironment()
            environment.merge(Self.environment(directory)) { $1 }
            let script = #"export LISTEN_FDS=1 LISTEN_PID=$$; exec "$0" --config "$1" 3</dev/null"#
            let ringd = try ChildProcess(
                "/bin/sh", ["-c", script, binary, configPath], environment: environment,
                stderr: .file(directory.file("ringd.log")))
            #expect(ringd.wait(timeout: 15) == .exited(1))
            let log = (try? String(contentsOfFile: directory.file("ringd.log"), encoding: .utf8)) ?? ""
            #expect(log == "ringd: cannot start: inherited fd 3 \"unknown\" is not a listening stream socket\n")
            #expect(!directory.contains("ringd.sqlite"))
        }
    }
}
