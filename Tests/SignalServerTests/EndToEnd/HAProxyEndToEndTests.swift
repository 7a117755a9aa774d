import Foundation
import SignalClient
import SignalProtocol
import SignalServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// deploy/haproxy/haproxy.cfg as shipped, run by Debian's `haproxy` (which
/// `make test` installs) in front of two `ringd` processes. Each ringd has
/// a SQLite store of its own: this proves the proxy (TLS, WebSockets, least
/// connections, checks of /readyz), not the cluster. The file takes its
/// addresses from the environment, so the test gives it the two ringd
/// ports, a third address that refuses connections, and its listening
/// socket as descriptor 3 (`fd@3`), bound here so no port can be taken in
/// between.
@Suite("EndToEnd: deploy/haproxy/haproxy.cfg in front of two ringd processes", .blocking)
struct HAProxyEndToEndTests {
    static let haproxy = "/usr/sbin/haproxy"
    static let configuration = Repository.root() + "/deploy/haproxy/haproxy.cfg"

    @Test("haproxy -c accepts the shipped file with its defaults and only a certificate given")
    func shippedFileIsValid() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.haproxy), "no \(Self.haproxy): make deps installs haproxy"
        )
        let directory = try TemporaryDirectory(prefix: "ringd-haproxy")
        defer { directory.remove() }
        let certificate = try Self.certificate(in: directory)
        defer { certificate.files.remove() }
        let output = directory.file("check.out")
        let check = try ChildProcess(
            Self.haproxy, ["-c", "-f", Self.configuration],
            environment: ["PATH": "/usr/sbin:/usr/bin:/bin", "LB_CERTIFICATE": certificate.pem],
            stdout: .file(output), stderr: .file(output))
        let ended = check.wait(timeout: 20)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(ended == .exited(0), "\(text)")
        #expect(text.contains("Configuration file is valid"), "\(text)")
    }

    /// ringd pings a quiet client and drops one that stays silent; HAProxy
    /// must not cut the tunnel first.
    @Test("the tunnel timeout outlasts ringd's ping interval and ping timeout")
    func tunnelOutlastsKeepAlive() throws {
        let text = try String(contentsOfFile: Self.configuration, encoding: .utf8)
        let line = try #require(
            text.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("timeout tunnel ") })
        let value = try #require(line.split(separator: " ").last)
        let seconds = try #require(value.hasSuffix("s") ? Double(value.dropLast()) : nil, "\(line): expected seconds")
        let defaults = ServerConfig()
        #expect(seconds > defaults.pingInterval && seconds > defaults.pingTimeout, "\(line)")
    }

    @Test(
        "through HAProxy: least connections put one device on each node; a killed node's clients are cut, new ones reach the other before and after the check marks it down"
    )
    func balancesAndFailsOver() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.haproxy), "no \(Self.haproxy): make deps installs haproxy"
        )
        let directory = try TemporaryDirectory(prefix: "ringd-haproxy")
        defer { directory.remove() }
        let certificate = try Self.certificate(in: directory)
        defer { certificate.files.remove() }

        var nodes: [RingdProcess] = []
        defer { nodes.forEach { $0.remove() } }
        for name in ["node1", "node2"] {
            try FileManager.default.createDirectory(atPath: directory.file(name), withIntermediateDirectories: false)
            nodes.append(try RingdProcess(directory: directory.file(name)))
        }
        // The file names three nodes; the third is an address that refuses
        // connections (bound, never listening) for as long as the test runs.
        let absent = try boundLoopbackSocket()
        defer { close(absent.fd) }
        let adminSocket = directory.file("admin.sock")
        let log = directory.file("haproxy.log")
        var environment = [
            "PATH": "/usr/sbin:/usr/bin:/bin",
            "LB_BIND": "fd@3",
            "LB_CERTIFICATE": certificate.pem,
            "LB_ADMIN_SOCKET": adminSocket,
            "LB_LOG": "stderr",
            "LB_NODE_1": "127.0.0.1:\(nodes[0].port)",
            "LB_NODE_2": "127.0.0.1:\(nodes[1].port)",
            "LB_NODE_3": "127.0.0.1:\(absent.port)",
        ]
        // Only root may chroot and change user; as root the file runs as shipped.
        if getuid() != 0 { environment["LB_UNCONFINED"] = "1" }
        let frontend = try boundLoopbackSocket()
        let proxy: ChildProcess
        do {
            // HAProxy has its own copy once started; this one would keep
            // the port open after HAProxy ended.
            defer { close(frontend.fd) }
            proxy = try ChildProcess(
                Self.haproxy, ["-db", "-f", Self.configuration], environment: environment,
                stdout: .file(log), stderr: .file(log), passing: frontend.fd)
        }
        defer { proxy.kill() }
        func haproxyLog() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        // Serving once its runtime API answers; the absent node fails its checks.
        var states: [String: Bool] = [:]
        let settled = waitUntil(timeout: 20) {
            states = (try? Self.serversUp(adminSocket)) ?? [:]
            return states == ["ringd1": true, "ringd2": true, "ringd3": false]
        }
        try #require(settled, "servers up: \(states); running: \(proxy.isRunning)\n\(haproxyLog())")

        let endpoint = ServerEndpoint(host: "127.0.0.1", port: frontend.port, isSecure: true)
        var options = ConnectOptions()
        options.tlsVerification = certificate.files.trusted
        func connect(_ uid: String) async throws -> SignalClient {
            try await SignalClient.connect(
                to: endpoint, credentials: .authKey(uid: uid, key: ServerConfig.developmentAuthKey),
                options: options)
        }
        func devices() -> [Int?] { nodes.map { try? Self.devicesAuthenticated(port: $0.port) } }

        let alice = try await connect("alice")
        var counts: [Int?] = []
        #expect(
            waitUntil(timeout: 10) {
                counts = devices(); return counts == [1, 0] || counts == [0, 1]
            }, "\(counts)")
        let aliceNode = try #require(counts.firstIndex(of: 1))
        let bob = try await connect("bob")
        #expect(
            waitUntil(timeout: 10) {
                counts = devices(); return counts == [1, 1]
            }, "bob went to alice's node: \(counts)")

        nodes[aliceNode].signal(SIGKILL)
        #expect(nodes[aliceNode].waitForExit(timeout: 10))
        #expect(await Self.disconnects(alice, within: 10), "alice's WebSocket outlived her node")
        // At once, before any check failed: the connection the dead node
        // refuses is tried again on the other (option redispatch).
        let carol = try await connect("carol")
        let survivor = nodes[1 - aliceNode]
        let dead = "ringd\(aliceNode + 1)"
        #expect(
            waitUntil(timeout: 15) {
                states = (try? Self.serversUp(adminSocket)) ?? [:]; return states[dead] == false
            },
            "\(dead) never marked down: \(states)\n\(haproxyLog())")
        #expect(states["ringd\(2 - aliceNode)"] == true, "\(states)")
        let dave = try await connect("dave")
        let erin = try await connect("erin")
        var survivorDevices: Int?
        #expect(
            waitUntil(timeout: 10) {
                survivorDevices = try? Self.devicesAuthenticated(port: survivor.port)
                return survivorDevices == 4
            }, "bob, carol, dave and erin on the node left: \(String(describing: survivorDevices))")
        for client in [bob, carol, dave, erin] { await client.close() }
    }

    /// A certificate for 127.0.0.1 and HAProxy's copy of it: chain and key in one file.
    private static func certificate(in directory: TemporaryDirectory) throws -> (files: CertificateFiles, pem: String) {
        let files = try CertificateFiles()
        let pem = directory.file("haproxy.pem")
        let chain = try String(contentsOfFile: files.certificatePath, encoding: .utf8)
        let key = try String(contentsOfFile: files.privateKeyPath, encoding: .utf8)
        try (chain + key).write(toFile: pem, atomically: true, encoding: .utf8)
        return (files, pem)
    }

    /// ringd_devices_authenticated from a node's /metrics (asked directly, not through HAProxy).
    private static func devicesAuthenticated(port: Int) throws -> Int? {
        let response = try SignalingIntegration.rest(port: port, "GET", "/metrics")
        let line = response.response.bodyText.split(separator: "\n").first {
            $0.hasPrefix("ringd_devices_authenticated ")
        }
        return line?.split(separator: " ").last.flatMap { Int($0) }
    }

    /// Whether `client`'s events end with a disconnect within `timeout` seconds.
    private static func disconnects(_ client: SignalClient, within timeout: Double) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in client.events {
                    if case .disconnected = event { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Each server of backend `ringd` by name, and whether HAProxy has it
    /// up (`srv_op_state` 2, running), from `show servers state`.
    private static func serversUp(_ socketPath: String) throws -> [String: Bool] {
        let lines = try runtimeAPI(socketPath, "show servers state ringd").split(separator: "\n")
        guard let header = lines.first(where: { $0.hasPrefix("# ") })?.dropFirst(2).split(separator: " "),
            let name = header.firstIndex(of: "srv_name"), let state = header.firstIndex(of: "srv_op_state")
        else {
            throw TestSocketError("no header in \(lines)")
        }
        var servers: [String: Bool] = [:]
        for line in lines where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            // The first line is the format's version alone.
            if fields.count > max(name, state) { servers[String(fields[name])] = fields[state] == "2" }
        }
        return servers
    }

    /// One command to HAProxy's runtime API on the Unix socket at `path`,
    /// and its answer (the API closes the connection after one command).
    private static func runtimeAPI(_ path: String, _ command: String) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError("socket(AF_UNIX): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw TestSocketError("\(path) is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            throw TestSocketError("connect to \(path): \(String(cString: strerror(errno)))", code: errno)
        }
        let request = Array((command + "\n").utf8)
        guard write(fd, request, request.count) == request.count else {
            throw TestSocketError("write to \(path) failed")
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { break }
            answer += chunk[0 ..< count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
