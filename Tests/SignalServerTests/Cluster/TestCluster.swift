import Foundation
import SignalServer
import TestSupport

extension SignalingIntegration {
    /// `ringd` nodes in cluster mode (`store.backend: postgres`) on one
    /// throw-away PostgreSQL, each node a process on a port of its own,
    /// with short leases and grace periods so failures play out in seconds.
    final class TestCluster {
        /// Seconds a node's lease lasts (`cluster.leaseSeconds`).
        static let leaseSeconds = 2.0
        /// `calls.reconnectGraceSeconds` of every node.
        static let graceSeconds = 3.0

        let postgres: ThrowawayPostgres
        let url: String
        private let root: TemporaryDirectory
        /// What every node gets in its environment besides the cluster's settings.
        private let environment: [String: String]
        private(set) var nodes: [RingdProcess] = []
        /// Every node's configuration file (push settings, say); the
        /// environment sets the cluster's keys over it.
        private let config: String

        init(nodes count: Int, config: String = "{}", environment: [String: String] = [:]) throws {
            self.config = config
            self.environment = environment
            root = try TemporaryDirectory()
            postgres = try ThrowawayPostgres()
            url = postgres.url
            for _ in 0 ..< count { try addNode() }
        }

        /// Starts one more node, with `extra` over the cluster's environment
        /// (another `RINGD_STORE_URL`, say); it serves once it registered in the database.
        @discardableResult
        func addNode(environment extra: [String: String] = [:]) throws -> RingdProcess {
            let directory = root.path + "/node\(nodes.count)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            // A node that does not start says why in the error: RingdProcess adds its log.
            let node = try RingdProcess(
                config: config,
                environment: [
                    "RINGD_STORE_BACKEND": "postgres",
                    "RINGD_STORE_URL": url,
                    "RINGD_CLUSTER_LEASE_SECONDS": String(Self.leaseSeconds),
                    "RINGD_CALLS_RECONNECT_GRACE_SECONDS": String(Self.graceSeconds),
                ].merging(environment) { $1 }.merging(extra) { $1 }, directory: directory)
            nodes.append(node)
            return node
        }

        /// A device of `uid` authenticated on node `index`; a failure names
        /// what every node logged.
        func open(_ index: Int, uid: String, deviceId: String) throws -> Device {
            do {
                return try Device.open(port: port(index), uid: uid, deviceId: deviceId)
            } catch {
                throw ClientError("\(error)\n\(logs)")
            }
        }

        /// Whether node `index` says ready (it registered again after a loss) within `timeout` seconds.
        func becomesReady(_ index: Int, timeout: Double = 15) -> Bool {
            waitUntil(timeout: timeout) {
                (try? SignalingIntegration.rest(port: port(index), "GET", "/readyz"))?.status == 200
            }
        }

        /// The port of node `index`.
        func port(_ index: Int) -> Int { nodes[index].port }

        /// Every node's log, for failure messages.
        var logs: String {
            nodes.enumerated().map { "node \($0.offset):\n\($0.element.log)" }.joined(separator: "\n")
        }

        deinit {
            for node in nodes { node.remove() }
            postgres.stop()
            root.remove()
        }
    }
}
