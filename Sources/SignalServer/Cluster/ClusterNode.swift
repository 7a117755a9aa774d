import Foundation
import SignalCore
import SignalProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// This ringd's part in a cluster (docs/CLUSTER.md): the workers that run
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
    /// The token secret every node shares when none is configured.
    let sharedTokenSecret: [UInt8]
    let workers: ClusterWorkers
    /// The webhook outbox in the database, read and written on the first worker.
    let webhookStore: ClusterWebhookStore
    private let listener: ClusterListener
    private let lease: ClusterLease
    private let serviceRef = Mutex<SignalingService?>(nil)
    private let webhooksRef = Mutex<ClusterWebhooks?>(nil)
    /// Stopping for good: a loss no longer makes the node register again.
    private let leaving = Atomic(false)
    /// When the node started leaving: its stop ends ``stopSeconds`` after.
    private let leftAt = Mutex<DispatchTime?>(nil)
    /// A maintenance round is queued on the worker and not done: the
    /// listener does not queue another (a slow database must not pile them up).
    let maintenanceQueued = Atomic(false)
    /// When the lease was last renewed (monotonic ms), for the fence.
    private let lastRenewal = Atomic<Int64>(0)
    /// This machine's clocks.
    let localClock: SignalingClock
    /// How far the database's clock is ahead of ``localClock``'s wall
    /// clock (ms), measured at start and at each lease renewal.
    private let databaseOffset: Atomic<Int64>
    /// Disconnects whose transaction failed, run again by the next rounds:
    /// presence must not keep a device that left.
    let failedDisconnects = Mutex<[Device]>([])

    /// Connects, brings the schema up to date and reads what the node needs
    /// before it serves. Blocks; throws ``StoreError`` when the database
    /// cannot be reached or migrated.
    public init(settings: ClusterSettings, name: String) throws(StoreError) {
        guard let url = settings.url else { throw StoreError(.database, "\"store.url\" is not set") }
        self.settings = settings
        self.name = name
        let localClock = SignalingClock.configured
        self.localClock = localClock
        // Revocations and push tokens are read when the listener attaches, before the node serves.
        let (secret, offset) = try reportingPostgresErrors { () throws(PostgresError) in
            let db = try PostgresConnection(url: url)
            try PostgresSchema.migrate(db)
            Self.checkFencing(db)
            let before = localClock.wall()
            let now = try db.databaseTime()
            return (try db.sharedTokenSecret(proposing: TokenSecret.generate()), now - (before + localClock.wall()) / 2)
        }
        sharedTokenSecret = secret
        databaseOffset = Atomic(offset)
        numberState = Atomic(0)
        workers = ClusterWorkers(
            count: settings.workers, url: url, leaseSeconds: settings.leaseSeconds,
            maxQueuedInputs: settings.maxQueuedInputs)
        webhookStore = ClusterWebhookStore(worker: workers.first)
        listener = ClusterListener(url: url, settings: settings)
        lease = ClusterLease(url: url, leaseSeconds: settings.leaseSeconds)
    }

    /// Warns when this node's role could not end the listening session
    /// of a node already running under another role, should it freeze
    /// ("What PostgreSQL must provide" in docs/CLUSTER.md).
    private static func checkFencing(_ db: PostgresConnection) {
        guard let roles = try? db.rolesBeyondFencing(), !roles.isEmpty else { return }
        Log.warning(
            "cluster nodes run as \(roles.joined(separator: ", ")), whose sessions this node's role may not end: "
                + "should one freeze, it keeps its session locks (the webhook leader's) until PostgreSQL drops its "
                + "connection; grant pg_signal_backend to every node's role, or run every node as one role")
    }

    /// This host's name and the process id.
    static var defaultName: String {
        var host = [CChar](repeating: 0, count: 256)
        let name =
            gethostname(&host, host.count - 1) == 0
            ? String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown host"
        return "\(name) pid \(getpid())"
    }

    /// The node's number now (0: none; see ``numberState``).
    var number: Int64 { numberState.load(ordering: .acquiring) }

    /// Starts the worker and the listener for `service`, whose deliveries
    /// and tokens they feed, and `webhooks` (nil without endpoints), and
    /// waits until the node is registered and listening, so it takes no
    /// device before it can hear what they are sent.
    func start(for service: SignalingService, webhooks: ClusterWebhooks?) throws(StoreError) {
        serviceRef.withLock { $0 = service }
        webhooksRef.withLock { $0 = webhooks }
        workers.start()
        guard listener.start(node: self, timeout: 30) else {
            throw StoreError(.database, "the cluster node could not register in PostgreSQL within 30 s")
        }
        lease.start(node: self, clock: service.clock)
        let watchdog = Thread { [self] in fence(service.clock) }
        watchdog.name = "ringd-cluster-fence"
        watchdog.start()
    }

    /// The clocks the node's service reads: the database's wall clock, as
    /// near as this node can tell (to within half a round trip), so that
    /// what nodes compare across the cluster (a call's ring deadline, a
    /// token's issue and expiry against a revocation) does not depend on
    /// which node's clock wrote it. Due timers and pruning go further and
    /// compare on the database itself (``PostgresConnection/setTimer(_:dueInMillis:)``).
    public var clock: SignalingClock {
        SignalingClock(
            wall: { [self] in localClock.wall() + databaseOffset.load(ordering: .relaxed) },
            monotonic: localClock.monotonic)
    }

    /// The database answered `now` (its clock, ms) between `before` and
    /// `after` (this node's wall clock): the offset between the two, which
    /// also follows a step of this machine's clock.
    func databaseTime(_ now: Int64, between before: Int64, and after: Int64) {
        databaseOffset.store(now - (before + after) / 2, ordering: .relaxed)
    }

    /// The lease was renewed at `now` (monotonic ms).
    func renewed(at now: Int64) { lastRenewal.store(now, ordering: .releasing) }

    /// Watches the lease from a thread of its own, since the lease's thread
    /// may be stuck in a connect to a database that went silent: a node that
    /// has not renewed for two thirds of its lease stops serving its devices
    /// before other nodes, after the whole lease, take them.
    private func fence(_ clock: SignalingClock) {
        let limit = Int64(settings.leaseSeconds * 1000 * 2 / 3)
        while !leaving.load(ordering: .acquiring) {
            // A watchdog's pace, not a wait for anything.
            Thread.sleep(forTimeInterval: 0.1)
            if number != 0 && clock.monotonic() - lastRenewal.load(ordering: .acquiring) > limit {
                lose("the database for longer than two thirds of its lease")
            }
        }
    }

    var service: SignalingService? { serviceRef.withLock { $0 } }

    /// The webhooks, when endpoints are enabled: written by every
    /// transition, sent by the leader.
    var webhooks: ClusterWebhooks? { webhooksRef.withLock { $0 } }

    /// How long a node's stop lasts at most, from ``leave()`` to the end
    /// of ``stop()``, whatever the database does: well within the 30 s
    /// Kubernetes gives a pod to stop (terminationGracePeriodSeconds).
    static let stopSeconds = 15.0
    /// How long ``leave()`` waits for the listener, then for the node to be declared dead.
    static let listenerStopSeconds = 2.0
    static let declareDeadSeconds = 5.0

    /// Starts leaving the cluster, before the server closes its
    /// connections: stops listening and renewing, and declares the node
    /// dead at once, on a connection of its own rather than behind what its
    /// worker has queued, so other nodes start taking its devices away at
    /// their next lease round, not a whole lease later. Each wait is
    /// bounded: a database that cannot be reached leaves that to
    /// ``stop()``, or to the lease.
    func leave() {
        guard !leaving.exchange(true, ordering: .acquiringAndReleasing) else { return }
        leftAt.withLock { $0 = .now() }
        lease.stop()
        listener.stop(waitingAtMost: Self.listenerStopSeconds)
        let number = self.number
        guard number != 0, let url = settings.url else { return }
        let declared = DispatchSemaphore(value: 0)
        let leaseSeconds = settings.leaseSeconds
        // On a thread of its own, so that a connect or a statement that hangs cannot hold the stop up.
        let thread = Thread {
            do throws(PostgresError) {
                try PostgresConnection.clusterSession(url: url, leaseSeconds: leaseSeconds).declareDead(number)
            } catch {
                Log.warning("cluster node \(number) could not declare itself dead: \(error.description)")
            }
            declared.signal()
        }
        thread.name = "ringd-cluster-leave"
        thread.start()
        if declared.wait(timeout: .now() + Self.declareDeadSeconds) == .timedOut {
            Log.warning(
                "cluster node \(number) could not declare itself dead within \(Self.declareDeadSeconds) s; "
                    + "other nodes take its devices away once its lease lapses")
        }
    }

    /// Leaves the cluster (``leave()``, if the server did not already),
    /// runs what is queued on every worker, takes its remaining devices
    /// away through the disconnect rules (their users' grace periods start,
    /// so calls go on when they reconnect to another node), deletes its
    /// row, and stops the workers, all within ``stopSeconds`` of leaving.
    /// What is not done by then (a slow or unreachable database, many
    /// devices) is left to the other nodes: the node is dead (declared, or
    /// its lease lapses), so they take its devices away through the same rules.
    func stop() {
        leave()
        let number = self.number
        let deadline = (leftAt.withLock { $0 } ?? .now()) + Self.stopSeconds
        let reapLast: ClusterWorker.Job? =
            number == 0
            ? nil
            : { @Sendable [self] (db: PostgresConnection?) in
                // Again: leave() may have found the database unreachable.
                guard let db, (try? db.declareDead(number)) != nil else { return }
                reap(number, lapsedMillisAgo: nil, on: db)
            }
        if !workers.stop(by: deadline, last: reapLast) {
            Log.warning(
                "cluster node \(number) stops with its workers' queues not done after \(Self.stopSeconds) s: "
                    + "the other nodes take its remaining devices away once it is dead")
        }
    }

    /// The database or the lease was lost: this node may have missed
    /// events, and other nodes may already have taken its devices away. It
    /// closes every connection (clients reconnect, here or elsewhere, and
    /// resume from the database) and registers again once it can.
    func lose(_ reason: String) {
        guard !leaving.load(ordering: .acquiring) else { return }
        let previous = numberState.exchange(0, ordering: .acquiringAndReleasing)
        guard previous != 0 else { return }
        failedDisconnects.withLock { $0 = [] }
        Log.warning("cluster node \(previous) lost \(reason); closing its connections and registering again")
        service?.closeEverySession(code: .goingAway, reason: "the node lost its database; reconnect")
    }

    /// The listener registered the node as `number` and listens for it.
    func registered(as number: Int64) {
        // Registering renews: the fence must not find the old lease's time.
        if let clock = service?.clock { renewed(at: clock.monotonic()) }
        numberState.store(number, ordering: .releasing)
        Log.info("cluster node \(number) (\(name)) serves from PostgreSQL")
    }
}
