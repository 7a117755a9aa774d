import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// A node's stop is bounded whatever the database does, so that it leaves
/// within the 30 s Kubernetes gives a pod.
@Suite("Cluster: a bounded stop", .blocking)
struct ClusterStopTests {
    typealias TestCluster = SignalingIntegration.TestCluster

    /// The server process and the sessions of every client but `db`'s own.
    static func databaseProcesses(_ cluster: TestCluster, _ db: PostgresConnection) throws -> [pid_t] {
        let pidFile = try String(contentsOfFile: cluster.postgres.directory + "/data/postmaster.pid", encoding: .utf8)
        let server = try #require(pidFile.split(separator: "\n").first.flatMap { pid_t($0) })
        let sessions = try db.execute(
            "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
        return [server] + (0 ..< sessions.count).compactMap { sessions.int64($0, 0).map { pid_t($0) } }
    }

    @Test("SIGTERM while the database hangs: the node exits within its bound, well under 30 s")
    func stopWithHungDatabase() throws {
        let cluster = try TestCluster(nodes: 1)
        let db = try PostgresConnection(url: cluster.url)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(0, uid: "bob", deviceId: "b1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        #expect(try bob.accept(sessionId).ok)
        _ = try alice.waitForEvent(sessionId, .ongoing)

        // Every statement and every connect now waits for good: no server-side timeout can end it.
        let paused = try Self.databaseProcesses(cluster, db)
        for pid in paused { kill(pid, SIGSTOP) }
        defer { for pid in paused { kill(pid, SIGCONT) } }
        let started = monotonicSeconds()
        cluster.nodes[0].signal(SIGTERM)
        #expect(cluster.nodes[0].waitForExit(timeout: ClusterNode.stopSeconds + 5), "\(cluster.logs)")
        #expect(monotonicSeconds() - started < 30)
        #expect(cluster.nodes[0].log.contains("queues not done"), "\(cluster.logs)")
    }
}
