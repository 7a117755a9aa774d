import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SignalProtocol
import Synchronization

/// This ringd's part in a cluster (docs/CLUSTER.md): the worker that runs
/// its transitions as PostgreSQL transactions, the listener that hears
/// what other transactions send its devices, its lease, and the timers it
/// fires for the whole cluster.
public final class ClusterNode: Sendable {
    let settings: ClusterSettings
    /// The node's number in `nodes`; 0 while it has none (before it
    /// registers, and after it lost the database or its lease until it
    /// registers again), when it takes no devices.
    private let numberState: Atomic<Int64>
    /// The name the node registers with (host and process id), for operators.
    let name: String
    /// Read from the database at start.
    let revocations: [String: Int64]
    /// The token secret every node shares when none is configured.
    let sharedTokenSecret: [UInt8]
    let worker: ClusterWorker
    private let listener: ClusterListener
    private let serviceRef = Mutex<SignalingService?>(nil)

    /// Connects, brings the schema up to date, registers the node and reads
    /// what the node needs before it serves. Blocks; throws ``StoreError``
    /// when the database cannot be reached or migrated.
    public init(settings: ClusterSettings, name: String, now: Int64) throws(StoreError) {
        guard let url = settings.url else { throw StoreError(.database, "\"store.url\" is not set") }
        self.settings = settings
        self.name = name
        let setUp = try ClusterTransaction.wrap { () throws(PostgresError) in
            let db = try PostgresConnection(url: url)
            try PostgresSchema.migrate(db)
            let proposed = (0 ..< 32).map { _ in String(format: "%02x", UInt8.random(in: 0 ... 255)) }.joined()
            let secret = try db.sharedValue("token_secret", proposing: proposed)
            return (db, try db.registerNode(name: name, now: now), secret)
        }
        revocations = try setUp.0.revocations()
        sharedTokenSecret = TokenSecret.decodeHex(setUp.2) ?? Array(setUp.2.utf8)
        numberState = Atomic(setUp.1)
        let lost = Mutex<(@Sendable (String) -> Void)?>(nil)
        worker = ClusterWorker(url: url) { error in lost.withLock { $0 }?("the worker's connection: \(error.message)") }
        listener = ClusterListener(url: url, settings: settings)
        lost.withLock { $0 = { [weak self] reason in self?.lose(reason) } }
    }

    /// This host's name and the process id.
    static var defaultName: String {
        var host = [CChar](repeating: 0, count: 256)
        let name = gethostname(&host, host.count - 1) == 0
            ? String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown host"
        return "\(name) pid \(getpid())"
    }

    /// The node's number now (0: none; see ``numberState``).
    var number: Int64 { numberState.load(ordering: .acquiring) }

    /// Starts the worker and the listener for `service`, whose deliveries
    /// and tokens they feed.
    func start(for service: SignalingService) {
        serviceRef.withLock { $0 = service }
        worker.start()
        listener.start(node: self)
    }

    var service: SignalingService? { serviceRef.withLock { $0 } }

    /// Leaves the cluster: runs what is queued, takes this node's
    /// remaining devices away through the disconnect rules (their users'
    /// grace periods start, so calls go on when they reconnect to another
    /// node), deletes the node's row, and stops both threads.
    func stop() {
        let number = self.number
        if number != 0 {
            let left = DispatchSemaphore(value: 0)
            worker.submit { [self] db in
                if let db { reap(number, on: db) }
                left.signal()
            }
            left.wait()
        }
        listener.stop()
        worker.stop()
    }

    /// The database or the lease was lost: this node may have missed
    /// events, and other nodes may already have taken its devices away. It
    /// closes every connection (clients reconnect, here or elsewhere, and
    /// resume from the database) and registers again once it can.
    func lose(_ reason: String) {
        let previous = numberState.exchange(0, ordering: .acquiringAndReleasing)
        guard previous != 0 else { return }
        Log.warning("cluster node \(previous) lost \(reason); closing its connections and registering again")
        service?.closeEverySession(code: .goingAway, reason: "the node lost its database; reconnect")
    }

    /// Registers again after ``lose(_:)`` (on the worker, from the maintenance round).
    func register(on db: PostgresConnection, now: Int64) {
        guard number == 0 else { return }
        do throws(PostgresError) {
            let number = try db.registerNode(name: name, now: now)
            numberState.store(number, ordering: .releasing)
            Log.info("cluster node registered again as \(number)")
        } catch {
            Log.warning("cluster node cannot register: \(error.description)")
        }
    }
}
