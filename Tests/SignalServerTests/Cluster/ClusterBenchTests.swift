import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ringbench calls` against two nodes of a cluster (bench/cluster.sh,
/// docs/BENCHMARKS.md "Cluster on PostgreSQL"): callers on one node,
/// callees on the other, both nodes' CPU summed and the database's measured.
@Suite("Cluster: ringbench with callers and callees on two nodes", .blocking)
struct ClusterBenchTests {
    static let pairs = 4
    /// Under the nodes' default rate limit: a caller sends 2 requests a call, at 5 calls/s.
    static let rate = 20
    static let duration = 3.0

    @Test("--callee-server puts the callees on node B; --server-pid twice and --db-pid are reported")
    func callersOnOneNodeCalleesOnTheOther() throws {
        let bench = try #require(
            Repository.executable("ringbench"),
            "no ringbench executable among \(Repository.executableCandidates("ringbench"))")
        let cluster = try SignalingIntegration.TestCluster(nodes: 2)
        let pidFile = try String(contentsOfFile: cluster.postgres.directory + "/data/postmaster.pid", encoding: .utf8)
        let postmaster = try #require(pidFile.split(separator: "\n").first.map(String.init))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (output, log) = (directory.file("ringbench.json"), directory.file("ringbench.log"))
        let arguments = [
            "calls", "--server", "ws://127.0.0.1:\(cluster.port(0))",
            "--callee-server", "ws://127.0.0.1:\(cluster.port(1))",
            "--server-pid", String(cluster.nodes[0].pid), "--server-pid", String(cluster.nodes[1].pid),
            "--db-pid", postmaster, "--pairs", String(Self.pairs), "--rate", String(Self.rate),
            "--duration", String(Self.duration), "--json",
        ]
        let ringbench = try ChildProcess(
            bench, arguments, environment: SignalingIntegration.childEnvironment(),
            stdout: .file(output), stderr: .file(log))
        defer { ringbench.kill() }
        let text = {
            ["json", "log"].map {
                (try? String(contentsOfFile: directory.file("ringbench.\($0)"), encoding: .utf8)) ?? ""
            }
            .joined(separator: "\n") + "\n" + cluster.logs
        }
        // While it calls, each node holds one side: the pairs' connections, and this request's own.
        let split = waitUntil(timeout: 15) {
            (try? healthConnections(port: cluster.port(0))) == Int64(Self.pairs + 1)
                && (try? healthConnections(port: cluster.port(1))) == Int64(Self.pairs + 1)
        }
        #expect(split, "each node should hold \(Self.pairs) parties: \(text())")
        let ended = ringbench.wait(timeout: Self.duration + 30)
        #expect(ended == .exited(0), "ringbench: \(ended.map { "\($0)" } ?? "still running"); \(text())")
        let report = try JSONValue.parse(Array(((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").utf8))
        let attempted = report["attempted"]?.integerValue ?? -1
        // How many it managed is the benchmark's business (a loaded machine
        // paces fewer); here it must have called, every call completing.
        #expect(attempted > 0, "\(text())")
        #expect(report["completed"]?.integerValue == attempted, "\(text())")
        #expect(report["failed"]?.integerValue == 0, "\(text())")
        // The ring is the callee's event on node B after the caller's initiate on node A.
        #expect((Self.number(report["ringMs"]?["p50"]) ?? 0) > 0, "\(text())")
        guard case .array(let perNode)? = report["serverCpuMicrosPerCallByProcess"] else {
            Issue.record("no per-node CPU: \(text())")
            return
        }
        #expect(perNode.count == 2, "\(text())")
        #expect(Self.number(report["serverCpuMicrosPerCall"]) != nil, "\(text())")
        #expect(Self.number(report["databaseCpuMicrosPerCall"]) != nil, "\(text())")
        // The postmaster, its background processes and a backend per node connection at least.
        #expect((report["databaseProcesses"]?.integerValue ?? 0) >= 5, "\(text())")
    }

    /// A JSON number as a Double.
    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .integer(let whole)?: Double(whole)
        case .double(let fraction)?: fraction
        default: nil
        }
    }

    @Test("--callee-server is refused with --spawn, and with another scheme than --server's")
    func calleeServerUsage() throws {
        let bench = try #require(
            Repository.executable("ringbench"),
            "no ringbench executable among \(Repository.executableCandidates("ringbench"))")
        for arguments in [
            ["--spawn", "/bin/false", "--callee-server", "ws://127.0.0.1:1"],
            ["--server", "ws://127.0.0.1:1", "--callee-server", "wss://127.0.0.1:2"],
        ] {
            let ringbench = try ChildProcess(
                bench, ["calls"] + arguments, environment: SignalingIntegration.childEnvironment())
            defer { ringbench.kill() }
            #expect(ringbench.wait(timeout: 10) == .exited(64), "\(arguments)")
        }
    }
}
