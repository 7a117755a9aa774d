import Foundation
import Synchronization

/// One of the threads that run this node's PostgreSQL transactions
/// (``ClusterWorkers``): one at a time, in the order they were submitted
/// (so one device's requests are decided in the order it sent them), on a
/// connection of its own. Loops only queue work here; nothing on a loop
/// waits for the database.
final class ClusterWorker: Sendable {
    /// How long a statement of this worker waits for a lock before
    /// PostgreSQL fails it (`lock_timeout`; the cluster sessions' default
    /// is 5 s). Locks are held for one transaction, a few round trips, so
    /// a wait this long means a stalled holder; the transaction is tried
    /// again within ``ClusterNode/retryBudgetMillis`` and then refused, so
    /// one held lock cannot stall the users queued behind it for longer.
    static let lockTimeoutMillis = 500

    /// Work for the connection; it runs on the worker's thread.
    typealias Job = @Sendable (PostgresConnection?) -> Void

    /// A job that runs one transaction, whose read can go with the
    /// previous transaction's commit (``ClusterLookahead``).
    struct Transaction: Sendable {
        /// Its start on the connection, computed when its read is sent
        /// ahead; nil when it will run none.
        let start: @Sendable (PostgresConnection) -> ClusterTransaction.Start?
        /// Runs it on the connection (nil: none), from its prefetched
        /// read when that came with the previous commit, with the worker's
        /// next transaction to send the read of after its own commit.
        let run: @Sendable (PostgresConnection?, ClusterTransaction.Prefetched?, ClusterLookahead?) -> Void
    }

    /// What the queue holds: the worker knows which jobs are transactions,
    /// so it can hand the next one's read to the one running. Any other
    /// job between two transactions (a read, a webhook's, maintenance)
    /// runs on its own, nothing sent ahead across it.
    enum Work: Sendable {
        case job(Job)
        case transaction(Transaction)

        /// Runs it with nothing sent ahead: no connection, or in order.
        func run(_ db: PostgresConnection?) {
            switch self {
            case .job(let job): job(db)
            case .transaction(let transaction): transaction.run(db, nil, nil)
            }
        }
    }

    private struct Queue {
        var jobs: [Work] = []
        var stopping = false
    }

    private let url: String
    private let leaseSeconds: Double
    /// Its place among the node's workers, for its thread's name and logs.
    let index: Int
    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Why the worker has no connection, from its first failed connect
    /// until one succeeds; nil while it has one (or has not needed one yet).
    private let outage = Mutex<String?>(nil)
    /// A connect attempt is queued for an outage (``probe()``).
    private let probing = Atomic(false)

    init(url: String, leaseSeconds: Double, index: Int) {
        self.url = url
        self.leaseSeconds = leaseSeconds
        self.index = index
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "ringd-cluster-\(index)"
        thread.start()
    }

    /// Queues a connect attempt while the worker cannot connect, unless
    /// one is queued: a worker with no job in sight would otherwise stay in
    /// its outage, and its node unready, after the database came back.
    func probe() {
        guard unavailable != nil, !probing.exchange(true, ordering: .acquiringAndReleasing) else { return }
        submit { [self] _ in probing.store(false, ordering: .releasing) }
    }

    /// Queues `job`; it gets the connection, or nil when the database
    /// cannot be reached right now.
    func submit(_ job: @escaping Job) { submit(.job(job)) }

    /// Queues `work`; it gets the connection, or nil when the database
    /// cannot be reached right now.
    func submit(_ work: Work) {
        let accepted = queue.withLock { queue in
            guard !queue.stopping else { return false }
            queue.jobs.append(work)
            return true
        }
        if accepted { wake.signal() } else { work.run(nil) }
    }

    /// Queues `body` and completes with its answer, or with a
    /// ``StoreErrorCode/database`` failure when the database cannot be reached.
    func submit<T>(
        _ body: @escaping @Sendable (PostgresConnection) throws(StoreError) -> T,
        completion: @escaping @Sendable (Result<T, StoreError>) -> Void
    ) {
        submit { db in
            guard let db else {
                return completion(.failure(StoreError(.database, "the cluster's database cannot be reached")))
            }
            completion(Result { () throws(StoreError) in try body(db) })
        }
    }

    /// Why the worker cannot run transactions now (its last connect
    /// failed), for `/readyz`; nil while it can.
    var unavailable: String? { outage.withLock { $0 } }

    /// Runs what is queued, then stops the thread; waits for it until
    /// `deadline`, and answers whether it finished (if not, it goes on
    /// until the process exits).
    @discardableResult
    func stop(by deadline: DispatchTime = .distantFuture) -> Bool {
        queue.withLock { $0.stopping = true }
        wake.signal()
        return done.wait(timeout: deadline) == .success
    }

    private func run() {
        defer { done.signal() }
        var connection: PostgresConnection?
        while true {
            wake.wait()
            let (taken, stopping) = queue.withLock { queue in
                defer { queue.jobs = [] }
                return (queue.jobs, queue.stopping)
            }
            var jobs = taken
            // One connect at most per batch: each may block for the connect
            // timeout, and a node that lost the database queues a job per device.
            var connectTried = false
            // The next transaction's read, sent with the last one's commit:
            // that transaction is open on `connection`, and runs next.
            var prefetched: ClusterTransaction.Prefetched?
            var index = 0
            while index < jobs.count {
                let work = jobs[index]
                index += 1
                // A transaction last in the batch looks at what was queued
                // meanwhile, taken now as the next batch, for the one after it.
                var more: [Work] = []
                if index == jobs.count, case .transaction = work {
                    more = queue.withLock { queue in
                        defer { queue.jobs = [] }
                        return queue.jobs
                    }
                }
                var ahead = prefetched.take()
                // A server that restarted closed the connection while it was idle: a new one, before the job fails on it.
                if let open = connection, !open.isAlive {
                    connection = nil
                    ahead = nil
                }
                if connection == nil && !connectTried {
                    connectTried = true
                    connection = connect()
                }
                // A job that fails on a broken connection answers for itself
                // (a failed disconnect makes the node start over).
                switch work {
                case .job(let job):
                    job(connection)
                case .transaction(let transaction):
                    let following = index < jobs.count ? jobs[index] : more.first
                    var next: ClusterLookahead?
                    if connection != nil, case .transaction(let after)? = following {
                        next = ClusterLookahead(after.start)
                    }
                    transaction.run(connection, ahead, next)
                    prefetched = next?.prefetched
                }
                // No transaction outlives its job but the next one's, whose
                // read went with a commit: a read that went ahead and failed,
                // or one whose job did not run it, is rolled back, its locks
                // released, before anything else runs or the worker waits.
                if prefetched == nil, let open = connection, open.isOpen, open.isInTransaction {
                    _ = try? open.execute("ROLLBACK")
                }
                if !more.isEmpty {
                    jobs = more
                    index = 0
                    connectTried = false
                }
            }
            if stopping && queue.withLock({ $0.jobs.isEmpty }) { return }
        }
    }

    /// A new connection, or nil; the first failure of an outage is logged
    /// and the reconnect that ends it, not every attempt in between (one a
    /// maintenance round while it lasts).
    private func connect() -> PostgresConnection? {
        do throws(PostgresError) {
            let connection = try PostgresConnection.clusterSession(url: url, leaseSeconds: leaseSeconds)
            try connection.execute("SET lock_timeout = \(Self.lockTimeoutMillis)")
            if outage.withLock({ $0.take() }) != nil {
                Log.info("the cluster worker is connected to the database again (worker \(index))")
            }
            return connection
        } catch {
            let reason = "the cluster worker cannot connect to the database (worker \(index)): \(error.description)"
            let first = outage.withLock { outage in
                defer { outage = reason }
                return outage == nil
            }
            if first {
                Log.warning(reason + " (tried again while it cannot; the node says not ready meanwhile)")
            }
            return nil
        }
    }
}
