import Foundation
import Synchronization

/// The thread that renews this node's lease every third of the lease
/// time, on a connection of its own with a short statement timeout and
/// without waiting for the commit's fsync (docs/CLUSTER.md, "Presence and
/// leases"). Neither the listener's work (a slow read, a message it takes)
/// nor the worker's queue can hold a renewal up, and a renewal that waits
/// on a slow database gives way to the next one in time, rather than sit
/// out a 10 s statement timeout while the node's fence runs out.
final class ClusterLease: Sendable {
    private let url: String
    private let leaseSeconds: Double
    private let stopping = Atomic(false)

    init(url: String, leaseSeconds: Double) {
        self.url = url
        self.leaseSeconds = leaseSeconds
    }

    /// A renewal's statement timeout, in ms: a sixth of the lease, so
    /// that at least three renewals are tried in the two thirds of a lease
    /// after which the node fences itself.
    static func timeoutMillis(leaseSeconds: Double) -> Int { max(100, Int(leaseSeconds * 1000 / 6)) }

    /// The lease's connection. `synchronous_commit = off`: a renewal does
    /// not wait for its WAL to reach disk, so a database slow to fsync does
    /// not make every node miss its renewals at once. A renewal lost in a
    /// database crash only makes the lease look older than it is (the node
    /// may be declared dead early, and registers again): it never extends
    /// a lease.
    static func session(url: String, leaseSeconds: Double) throws(PostgresError) -> PostgresConnection {
        let connection = try PostgresConnection(url: url)
        try connection.execute("SET statement_timeout = \(timeoutMillis(leaseSeconds: leaseSeconds))")
        try connection.execute("SET synchronous_commit = off")
        try connection.execute("SET application_name = 'ringd lease'")
        return connection
    }

    /// Starts the thread; it renews `node`'s lease while the node has a number.
    func start(node: ClusterNode, clock: SignalingClock) {
        let thread = Thread { [self] in run(node, clock) }
        thread.name = "ringd-cluster-lease"
        thread.start()
    }

    /// Stops renewing. The thread is not waited for: it may be in a connect
    /// to a database that went silent, and a stopping node must not wait
    /// on that (it declares itself dead anyway).
    func stop() { stopping.store(true, ordering: .releasing) }

    private func run(_ node: ClusterNode, _ clock: SignalingClock) {
        let period = Int64(leaseSeconds * 1000 / 3)
        var connection: PostgresConnection?
        var next: Int64 = 0
        var failing = false
        while !stopping.load(ordering: .acquiring) {
            let number = node.number, now = clock.monotonic()
            if number != 0 && now >= next {
                do throws(PostgresError) {
                    if let open = connection, !open.isAlive { connection = nil }
                    let open: PostgresConnection
                    if let connection {
                        open = connection
                    } else {
                        open = try Self.session(url: url, leaseSeconds: leaseSeconds)
                        connection = open
                    }
                    let before = node.localClock.wall()
                    if let written = try open.renewLease(node: number) {
                        // When the renewal started: the lease runs from no later than that.
                        node.renewed(at: now)
                        node.databaseTime(written, between: before, and: node.localClock.wall())
                        next = now + period
                    } else {
                        node.lose("its lease (another node found it lapsed)")
                    }
                    if failing { Log.info("cluster node \(number) renews its lease again") }
                    failing = false
                } catch {
                    // Tried again at the next pace; the fence says when it has gone on too long.
                    if !failing {
                        Log.warning("cluster node \(number) could not renew its lease: \(error.description)")
                    }
                    failing = true
                }
            }
            // A renewal's pace, not a wait for anything.
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
