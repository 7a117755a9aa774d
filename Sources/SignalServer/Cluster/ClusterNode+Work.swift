import Foundation
import SignalCore
import SignalProtocol

extension ClusterNode {
    /// Transactions PostgreSQL rolled back to break a deadlock or a lock
    /// wait are run again, up to this many times in all, while
    /// ``retryBudgetMillis`` lasts.
    static let attempts = 5
    /// A transaction is run again only this long (ms) after its first
    /// try: with ``ClusterWorker/lockTimeoutMillis`` a worker stalls behind
    /// a held lock for at most this plus one lock timeout per input.
    static let retryBudgetMillis: UInt64 = 2000
    /// Due timers one maintenance round fires at most (the next round takes the rest).
    static let timersPerRound = 64
    /// Failed transactions after which a timer is quarantined: it is tried
    /// once a lease at most, so what fails for that long is not passing.
    static let timerAttempts = 3

    /// Queues `transaction` on the worker of `key`. `failed` gets the error
    /// when it could not commit (the database is unreachable, or failed);
    /// it runs on the worker's thread. False, and nothing queued, when the
    /// input is `sheddable` and the workers' queue is full.
    func submit(
        _ transaction: ClusterTransaction, key: String, sheddable: Bool,
        failed: @escaping @Sendable (StoreError, _ connectionLost: Bool) -> Void
    ) -> Bool {
        let work = ClusterWorker.Transaction { [self] db in
            guard let service, number != 0 else { return nil }
            return start(transaction, on: db, for: service)
        } run: { [self] db, prefetched, next in
            guard let db, let service, number != 0 else {
                return failed(StoreError(.database, "the cluster node has no database connection"), false)
            }
            if let error = run(transaction, on: db, for: service, prefetched: prefetched, next: next) {
                failed(error, !db.isAlive)
            }
        }
        return workers.submitInput(on: workers.worker(for: key), sheddable: sheddable, .transaction(work))
    }

    /// How `transaction` starts now on `db`.
    private func start(
        _ transaction: ClusterTransaction, on db: PostgresConnection, for service: SignalingService
    ) -> ClusterTransaction.Start {
        transaction.start(
            on: db, settings: service.machineSettings, now: service.clock.now(), node: number,
            leaseMillis: Int64(settings.leaseSeconds * 1000))
    }

    /// Runs `transaction` now (on a worker), retrying deadlocks and lock
    /// waits within ``retryBudgetMillis``; the error if it did not commit.
    /// `prefetched` is its read, when it came with the previous commit (its
    /// first try uses it); `next`, the worker's next transaction, whose
    /// read goes with this one's commit (``ClusterLookahead``).
    func run(
        _ transaction: ClusterTransaction, on db: PostgresConnection, for service: SignalingService,
        prefetched: ClusterTransaction.Prefetched? = nil, next: ClusterLookahead? = nil
    ) -> StoreError? {
        let started = DispatchTime.now().uptimeNanoseconds
        var prefetched = prefetched
        for attempt in 1 ... Self.attempts {
            do throws(StoreError) {
                let ahead = prefetched.take()
                let outcome = try transaction.run(
                    ahead?.start ?? start(transaction, on: db, for: service), received: ahead?.results, on: db,
                    webhooks: webhooks, frame: service.resultFrame, next: next)
                if !outcome.changes.isEmpty {
                    for consumer in service.consumers { consumer.committed(outcome.changes) }
                }
                for ring in outcome.rings { service.pushes?.ring(ring.call, connected: ring.connected) }
                return nil
            } catch
                where error.code == .retry && attempt < Self.attempts
                && DispatchTime.now().uptimeNanoseconds - started < Self.retryBudgetMillis * 1_000_000
            {
                continue
            } catch {
                return error
            }
        }
        return nil
    }

    /// A disconnect that did not commit: the next rounds try it again.
    func disconnectLater(_ device: Device) {
        failedDisconnects.withLock { $0.append(device) }
    }

    /// Queues one maintenance round on the first worker unless one is queued:
    /// disconnects that failed before, the devices of nodes whose lease
    /// lapsed (`leases`, every third of the lease), and due timers; and a
    /// connect attempt on each worker that cannot connect (``ClusterWorker/probe()``).
    func maintain(leases: Bool) {
        for worker in workers.all { worker.probe() }
        guard !maintenanceQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        workers.first.submit { [self] db in
            defer { maintenanceQueued.store(false, ordering: .releasing) }
            guard let db, let service, number != 0 else { return }
            for device in failedDisconnects.withLock({ pending in
                defer { pending = [] }; return pending
            }) {
                if run(disconnect(device), on: db, for: service) != nil { disconnectLater(device) }
            }
            if leases { reapLapsedNodes(on: db) }
            fireTimers(on: db, for: service)
        }
    }

    /// Claims due timers and runs the transaction of each. A claim lasts
    /// a lease: a node that dies with timers claimed leaves them to the
    /// others after that. A timer that failed waits as long before any node
    /// tries it again, and after ``timerAttempts`` failures is quarantined,
    /// so rows that always fail neither fill every round nor cost each node
    /// a transaction per round.
    private func fireTimers(on db: PostgresConnection, for service: SignalingService) {
        let claim = Int64(settings.leaseSeconds * 1000)
        let due: [SignalingTimer]
        do throws(PostgresError) {
            due = try db.claimDueTimers(limit: Self.timersPerRound, claimMillis: claim)
        } catch {
            return Log.warning("cluster timers cannot be claimed: \(error.description)")
        }
        for timer in due {
            let transaction = ClusterTransaction(description: .timer(timer)) { machine, now in
                machine.timerFired(timer, now: now)
            }
            guard let error = run(transaction, on: db, for: service) else { continue }
            let row = PostgresConnection.row(of: timer)
            switch Result(catching: { () throws(PostgresError) in
                try db.timerFailed(timer, retryMillis: claim, quarantineAfter: Self.timerAttempts)
            }) {
            case .success(true):
                Log.error(
                    "the cluster's \(row.kind) timer of \(row.subject) failed \(Self.timerAttempts) times and is "
                        + "quarantined (timers.failed_at; setting it again clears that): \(error.message)")
            case .success(false):
                Log.warning(
                    "the cluster's \(row.kind) timer of \(row.subject) failed (tried again in \(claim) ms): "
                        + error.message)
            case .failure(let failure):
                Log.warning(
                    "the cluster's \(row.kind) timer of \(row.subject) failed (\(error.message)), and so did "
                        + "counting that (it is tried again once its claim lapses): \(failure.description)")
            }
        }
    }

    private func reapLapsedNodes(on db: PostgresConnection) {
        do throws(PostgresError) {
            for (lapsed, ago) in try db.lapsedNodes(leaseMillis: Int64(settings.leaseSeconds * 1000)) {
                guard lapsed != number else { return lose("its lease (another node found it lapsed)") }
                if !(try db.fence(lapsed)) {
                    Log.warning(
                        "cluster node \(lapsed) is dead but its listening session is another role's, which this "
                            + "node's role may not end: its session locks (the webhook leader's) stay until "
                            + "PostgreSQL drops it (grant pg_signal_backend; docs/CLUSTER.md)")
                }
                reap(lapsed, lapsedMillisAgo: ago, on: db)
            }
            try db.dropStaleMessages(olderThanMillis: 60_000)
        } catch {
            Log.warning("cluster maintenance failed: \(error.description)")
        }
    }

    /// Takes every device of the dead `node` away, then its row: those of
    /// users without a live call in one statement (their disconnect
    /// changes nothing else), the others as disconnects, each in its own
    /// transaction (grace rules apply from when its lease ran out,
    /// `lapsedMillisAgo`, when known). Any node may do this, several
    /// at once even: a device already gone is no change, and each goes
    /// through them in its own order so they share the work. What fails
    /// is left to the next round. Meanwhile the devices count as
    /// connected nowhere (``ClusterTransaction``).
    func reap(_ node: Int64, lapsedMillisAgo: Int64?, on db: PostgresConnection) {
        guard let service else { return }
        let idle: Int, inCalls: [Device]
        do throws(PostgresError) {
            idle = try db.removeIdlePresence(onNode: node)
            inCalls = try db.devices(onNode: node)
        } catch {
            return Log.warning("taking away the devices of cluster node \(node) failed: \(error.description)")
        }
        if idle + inCalls.count > 0 {
            Log.warning(
                "cluster node \(node) is dead; took away \(idle) of its devices, disconnecting \(inCalls.count) in calls"
            )
        }
        for device in inCalls.shuffled() {
            if let error = run(disconnect(device, millisAgo: lapsedMillisAgo), on: db, for: service) {
                Log.warning(
                    "disconnecting \(device.uid)/\(device.deviceId) of node \(node) failed (tried again later): "
                        + error.message)
            }
        }
        _ = try? db.removeNode(node)
    }

    /// The disconnect of `device`, as if `millisAgo` ms ago when given: a
    /// dead node's devices left when its lease ran out, not when another
    /// node noticed, so their grace ends when it would have. An interval
    /// the database measured, not a time: this node's clock cannot move it.
    private func disconnect(_ device: Device, millisAgo: Int64? = nil) -> ClusterTransaction {
        ClusterTransaction(description: .disconnect(device)) { machine, now in
            guard let millisAgo, millisAgo > 0 else { return machine.disconnect(device, now: now) }
            return machine.disconnect(
                device, now: SignalingTime(wall: now.wall - millisAgo, monotonic: now.monotonic - millisAgo))
        }
    }

    /// Runs `read` on the first worker, after what is queued there; it
    /// gets nil when the database cannot be reached.
    func read(_ read: @escaping @Sendable (PostgresConnection?) -> Void) {
        workers.first.submit(read)
    }

    /// Runs `body` on the worker of `key` (a uid: after that user's inputs
    /// queued before it; nil: the first worker), and completes with its
    /// answer, or a failure when the database cannot be reached.
    func read<T>(
        key: String? = nil,
        _ body: @escaping @Sendable (PostgresConnection) throws(StoreError) -> T,
        completion: @escaping @Sendable (Result<T, StoreError>) -> Void
    ) {
        (key.map(workers.worker(for:)) ?? workers.first).submit(body, completion: completion)
    }

    /// Runs `read` on the worker of `device`'s user, after the inputs it
    /// sent before, and answers its request `id` the way those inputs'
    /// results travel: a notification on this node's own channel, which the
    /// listener hands over after theirs (notifications arrive in commit
    /// order). Answered directly, the read could overtake the result of an
    /// earlier request still on its way. It costs the read a notification.
    /// Like a request, it is refused while the workers' queue is full.
    func answer(
        _ device: Device, id: String, for service: SignalingService,
        _ read: @escaping @Sendable (PostgresConnection) throws(StoreError) -> ResultData
    ) {
        let queued = workers.submitInput(on: workers.worker(for: device.uid), sheddable: true) { [self] db in
            guard let db else {
                return service.reply(to: device, id: id, .failure(Refusal.clusterUnavailable))
            }
            let reply = Result { () throws(StoreError) in try read(db) }.mapError(\.signalError)
            let frame = service.resultFrame(id: id, reply.map(\.json))
            var message = NodeMessage()
            message.send(frame, to: [device.address])
            let number = self.number
            do throws(PostgresError) {
                guard number != 0 else { throw PostgresError(sqlState: nil, message: "the node has no number") }
                _ = try db.execute(
                    PostgresConnection.notify(ClusterChannel.node(number), node: number, body: message.body))
            } catch {
                // Better late in order than not at all: the device hears it now.
                service.deliver([(device.address, .frame(frame))])
            }
        }
        if !queued { service.reply(to: device, id: id, .failure(overloaded(workers.retryAfterMillis))) }
    }
}
