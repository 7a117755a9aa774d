import SignalProtocol

extension ClusterNode {
    /// Transactions PostgreSQL rolled back to break a deadlock are run
    /// again, up to this many times in all.
    static let attempts = 5
    /// Due timers one maintenance round fires at most (the next round takes the rest).
    static let timersPerRound = 256

    /// Runs `transaction` on the worker. `failed` gets the error when it
    /// could not commit (the database is unreachable, or failed); it runs
    /// on the worker's thread.
    func submit(_ transaction: ClusterTransaction, failed: @escaping @Sendable (StoreError) -> Void) {
        worker.submit { [self] db in
            guard let db, let service, number != 0 else {
                return failed(StoreError(.database, "the cluster node has no database connection"))
            }
            if let error = run(transaction, on: db, for: service) { failed(error) }
        }
    }

    /// Runs `transaction` now (on the worker), retrying deadlocks; the error if it did not commit.
    func run(_ transaction: ClusterTransaction, on db: PostgresConnection, for service: SignalingService) -> StoreError? {
        for attempt in 1 ... Self.attempts {
            do throws(StoreError) {
                let outcome = try transaction.run(on: db, settings: service.machineSettings, now: service.clock.now(),
                                                  frame: service.resultFrame)
                if !outcome.changes.isEmpty { for consumer in service.consumers { consumer.committed(outcome.changes) } }
                return nil
            } catch where error.code == .retry && attempt < Self.attempts {
                continue
            } catch {
                return error
            }
        }
        return nil
    }

    /// One maintenance round, on the worker: renew the lease, take the
    /// devices of nodes whose lease lapsed, and fire due timers. `leases` is
    /// false on the rounds in between lease renewals, which only fire timers.
    func maintain(leases: Bool) {
        worker.submit { [self] db in
            guard let db, let service else { return }
            let now = service.clock.wall()
            let number = self.number
            guard number != 0 else { return }
            if leases {
                do throws(PostgresError) {
                    guard try db.renewLease(node: number, now: now) else {
                        return lose("its lease (another node found it lapsed)")
                    }
                    let cutoff = now - Int64(settings.leaseSeconds * 1000)
                    for lapsed in try db.lapsedNodes(before: cutoff) where lapsed != number {
                        Log.warning("cluster node \(lapsed) stopped renewing its lease; its devices are disconnected")
                        reap(lapsed, on: db)
                    }
                } catch {
                    Log.warning("cluster maintenance failed: \(error.description)")
                }
            }
            let due = (try? db.dueTimers(by: now, limit: Self.timersPerRound)) ?? []
            for timer in due {
                let transaction = ClusterTransaction(description: .timer(timer)) { machine, now in
                    machine.timerFired(timer, now: now)
                }
                if let error = run(transaction, on: db, for: service) {
                    Log.warning("a cluster timer failed (it stays due): \(error.message)")
                }
            }
        }
    }

    /// Takes `node`'s devices away as disconnects (each in its own
    /// transaction: grace rules apply), then its row. Any node may do this,
    /// twice even: a device already gone is no change.
    func reap(_ node: Int64, on db: PostgresConnection) {
        guard let service else { return }
        let devices = (try? db.devices(onNode: node)) ?? []
        for device in devices {
            let transaction = ClusterTransaction(description: .disconnect(device)) { machine, now in
                machine.disconnect(device, now: now)
            }
            if let error = run(transaction, on: db, for: service) {
                return Log.warning("taking node \(node)'s devices failed (tried again later): \(error.message)")
            }
        }
        _ = try? db.removeNode(node)
    }

    /// Runs `read` on the worker, after what is queued; it gets nil when
    /// the database cannot be reached.
    func read(_ read: @escaping @Sendable (PostgresConnection?) -> Void) {
        worker.submit(read)
    }
}
