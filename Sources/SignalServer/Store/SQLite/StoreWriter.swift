import SignalSystem

/// Runs batches on the writer's connection: takes every queued job at once
/// and runs the batch in one transaction (group commit), so a burst of saves
/// costs one commit, and with `synchronous = FULL` one fsync, instead of one
/// each. Whoever holds the connection (``StoreRunner``) runs it: the writer
/// thread, or an event loop at the end of its pass.
///
/// Within a batch, jobs run in queue order, so a read sees every write queued
/// before it. A writing job that fails rolls back alone and gets its own
/// error; the rest of the batch still commits. For that the batch first runs
/// straight through; if a writing job fails (rare: a bug or a full disk), the
/// transaction is rolled back and the batch replayed with each writing job
/// under a savepoint. Jobs have no effect but on the database until they
/// report, so a replay is safe. (Savepoints on every job would cost about a
/// third of the throughput.)
///
/// Changes of calls are chained (``StoreJob/chained``): once one fails, every
/// later one fails too without running, in this batch and the next, until a
/// job that resets the chain; so the store always holds a prefix of the
/// changes in the order they were made, never a later change without an
/// earlier one it may build on.
///
/// Completions run only after COMMIT, in queue order, on the thread that ran
/// the batch; then the actions they deferred with ``CallStore/afterBatch(_:)``.
/// If the transaction itself fails (BEGIN, COMMIT, or an error that made
/// SQLite abort it), it is rolled back and every job of the batch gets that
/// error, reads included: they may have seen the lost writes. A batch without
/// writes runs without a transaction.
final class StoreWriter {
    private let connection: StoreConnection
    private let queue: StoreQueue
    private let stats: StoreStats
    /// Whether a chained job failed and no job has reset the chain since.
    private var chainBroken = false

    init(connection: StoreConnection, queue: StoreQueue, stats: StoreStats) {
        self.connection = connection
        self.queue = queue
        self.stats = stats
    }

    /// Runs queued jobs as one batch, reports the outcomes and runs what
    /// their completions deferred. The writer thread takes every queued job,
    /// then catches up with the log if the commit hook asked for it (a copy
    /// that waits on the disk). An event loop (`onLoop`) runs only what
    /// loops' passes queued at the head of the queue
    /// (``StoreQueue/takeLoopBatch()``), waits for no lock, and leaves the
    /// batch to the writer thread when committing it could wait on the disk:
    /// a catch-up is owed, or the commit would start the log over
    /// (``StoreConnection/beginWithoutWaiting()``).
    func runQueued(onLoop: Bool) -> StoreRun {
        connection.waitsForLocks = !onLoop
        guard onLoop else {
            let batch = queue.takeBatch()
            if let batch {
                _ = execute(batch, onLoop: false)
                queue.runBatchEndActions()
            }
            connection.catchUpIfOwed()
            return batch == nil ? .nothingQueued : .ran
        }
        if connection.catchUpOwed { return .leftToWriterThread }
        switch queue.takeLoopBatch() {
        case .nothingQueued: return .nothingQueued
        case .othersFirst: return .leftToWriterThread
        case .batch(let batch):
            guard execute(batch, onLoop: true) else {
                queue.putBack(batch)
                return .leftToWriterThread
            }
            queue.runBatchEndActions()
            return .ran
        }
    }

    /// Runs one batch and reports every job's outcome; false, with nothing
    /// reported and the chain as it was, when an event loop must leave the
    /// batch to the writer thread.
    private func execute(_ batch: [StoreJob], onLoop: Bool) -> Bool {
        guard batch.contains(where: \.writes) else {
            let outcomes = batch.map(run)
            count(batch, onLoop: onLoop)
            for outcome in outcomes { outcome.report() }
            return true
        }
        let brokenBefore = chainBroken
        let started = Deadline.now()
        let outcomes: [StoreJobOutcome]
        do throws(StoreError) {
            guard let committed = try runTransaction(batch, isolated: false, brokenBefore: brokenBefore, onLoop: onLoop)
            else { return false }
            outcomes = committed
        } catch {
            // A failed transaction counts too: its time was spent all the same.
            stats.commitSeconds.observe(Deadline.now().seconds(since: started))
            count(batch, onLoop: onLoop)
            Log.error("call store: a batch of \(batch.count) jobs was rolled back: \(error)")
            chainBroken = brokenBefore || batch.contains(where: \.chained)
            for job in batch { job.fail(error) }
            return true
        }
        stats.commitSeconds.observe(Deadline.now().seconds(since: started))
        count(batch, onLoop: onLoop)
        for outcome in outcomes { outcome.report() }
        return true
    }

    /// Counts a batch that ran, before its jobs report (`GET /metrics`).
    private func count(_ batch: [StoreJob], onLoop: Bool) {
        stats.batchSize.observe(Double(batch.count))
        if onLoop {
            stats.loopBatches.add(1, ordering: .relaxed)
        } else {
            stats.writerThreadBatches.add(1, ordering: .relaxed)
        }
    }

    /// Runs one job, or refuses a chained one while the chain is broken.
    private func run(_ job: StoreJob) -> StoreJobOutcome {
        if job.resetsChain { chainBroken = false }
        if job.chained && chainBroken {
            return job.refused(StoreError(.chainBroken, "an earlier change failed to commit; this one was not saved"))
        }
        let outcome = job.run(connection)
        if job.chained && outcome.error != nil { chainBroken = true }
        return outcome
    }

    /// Runs `batch` between BEGIN IMMEDIATE and COMMIT. When `isolated`, each
    /// writing job runs under a savepoint that its failure rolls back to.
    /// Otherwise a writing job's failure rolls the whole transaction back and
    /// the batch is replayed isolated, from the chain's state before it.
    /// Rolls back and throws when the transaction fails. On an event loop
    /// (`onLoop`) nil, with nothing begun or all rolled back and the chain
    /// as before: the transaction could not begin without waiting, or a
    /// writing job failed (the replay is the writer thread's, whose BEGIN
    /// may wait).
    private func runTransaction(
        _ batch: [StoreJob], isolated: Bool, brokenBefore: Bool, onLoop: Bool
    ) throws(StoreError) -> [StoreJobOutcome]? {
        do throws(StoreError) {
            if onLoop {
                guard try connection.beginWithoutWaiting() else { return nil }
            } else {
                try connection.begin()
            }
            var outcomes: [StoreJobOutcome] = []
            outcomes.reserveCapacity(batch.count)
            for job in batch {
                let savepoint = isolated && job.writes
                if savepoint { try connection.savepoint() }
                let outcome = run(job)
                if let error = outcome.error, !connection.isInTransaction {
                    throw StoreError(error.code, "the transaction was aborted: \(error.message)")
                }
                if let error = outcome.error, error.code != .chainBroken, job.writes, !isolated {
                    try connection.rollback()
                    chainBroken = brokenBefore
                    if onLoop { return nil }
                    return try runTransaction(batch, isolated: true, brokenBefore: brokenBefore, onLoop: false)
                }
                if savepoint {
                    if outcome.error == nil {
                        try connection.releaseSavepoint()
                    } else {
                        try connection.rollbackToSavepoint()
                    }
                }
                outcomes.append(outcome)
            }
            if let fault = queue.fault(at: .commit) { throw fault }
            try connection.commit()
            return outcomes
        } catch {
            do throws(StoreError) {
                try connection.rollback()
            } catch let rollbackError {
                Log.error("call store: rollback failed: \(rollbackError.message)")
            }
            throw error
        }
    }
}

/// What ``StoreWriter/runQueued(onLoop:)`` did.
enum StoreRun {
    case ran
    case nothingQueued
    /// Nothing: the writer thread must run the queue (another thread's job
    /// comes first, or committing could wait on the disk or a lock).
    case leftToWriterThread
}
