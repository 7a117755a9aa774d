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

    /// Runs every queued job as one batch, reports the outcomes, runs what
    /// their completions deferred, and catches up with the log if the commit
    /// hook asked for it (a copy that may wait on the disk: only on the
    /// writer thread, so with `onLoop` nothing is run while a catch-up is
    /// owed: the writer thread must take over).
    func runQueued(onLoop: Bool) -> StoreRun {
        if onLoop && connection.catchUpOwed { return .leftToWriterThread }
        let batch = queue.takeBatch()
        if let batch {
            stats.batchSize.observe(Double(batch.count))
            if onLoop {
                stats.loopBatches.add(1, ordering: .relaxed)
            } else {
                stats.writerThreadBatches.add(1, ordering: .relaxed)
            }
            execute(batch)
            queue.runBatchEndActions()
        }
        if !onLoop { connection.catchUpIfOwed() }
        return batch == nil ? .nothingQueued : .ran
    }

    /// Runs one batch and reports every job's outcome.
    private func execute(_ batch: [StoreJob]) {
        guard batch.contains(where: \.writes) else {
            let outcomes = batch.map(run)
            for outcome in outcomes { outcome.report() }
            return
        }
        let brokenBefore = chainBroken
        let started = Deadline.now()
        let outcomes: [StoreJobOutcome]
        do throws(StoreError) {
            outcomes = try runTransaction(batch, isolated: false, brokenBefore: brokenBefore)
        } catch {
            // A failed transaction counts too: its time was spent all the same.
            stats.commitSeconds.observe(Deadline.now().seconds(since: started))
            Log.error("call store: a batch of \(batch.count) jobs was rolled back: \(error)")
            chainBroken = brokenBefore || batch.contains(where: \.chained)
            for job in batch { job.fail(error) }
            return
        }
        stats.commitSeconds.observe(Deadline.now().seconds(since: started))
        for outcome in outcomes { outcome.report() }
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
    /// Rolls back and throws when the transaction fails.
    private func runTransaction(
        _ batch: [StoreJob], isolated: Bool, brokenBefore: Bool
    ) throws(StoreError) -> [StoreJobOutcome] {
        do throws(StoreError) {
            try connection.begin()
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
                    return try runTransaction(batch, isolated: true, brokenBefore: brokenBefore)
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
    /// Nothing: the writer thread must run the queue (a catch-up is owed).
    case leftToWriterThread
}
