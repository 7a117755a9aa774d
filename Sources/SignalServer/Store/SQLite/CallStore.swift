import CShim
import Foundation
import SignalCore
import SignalProtocol
import Synchronization

/// The durable store of calls, call histories and token revocations: one
/// SQLite database (WAL) with one writer connection. Every operation is a
/// job queued for the writer, which runs everything queued at once in one
/// transaction (group commit; see ``StoreWriter``). The writer thread runs
/// the queue when jobs arrive; an event loop runs the jobs of its pass
/// itself at the end of the pass, when the connection is free and the
/// commit waits on nothing (``runQueuedOnLoop()``, ``StoreRunner``): it
/// writes the log into the page cache and returns. Everything that may wait
/// on the disk or a lock (checkpoints, the commit that starts the log
/// over, other threads' jobs) runs on the writer thread. At ``inMemoryPath`` the
/// database lives in the writer's connection instead, for tests and `ringd
/// --ephemeral`: the same jobs and transactions, no file, and nothing
/// survives the process.
///
/// Ordering: jobs run in the order they were queued, so a read sees every
/// write queued before it. Completions are called on the thread that ran
/// the batch, after it committed, in queue order; they must be quick and
/// must not call the blocking methods (``flush()``, ``close()``,
/// ``loadRevocations()``, ``loadLiveCalls()``), which would wait
/// for the thread they run on. A job queued after ``close()`` is refused:
/// its completion gets ``StoreErrorCode/closed`` at once, on the caller's thread.
public final class CallStore: Sendable {
    /// The path that opens an in-memory store (SQLite's own name for one).
    public static let inMemoryPath = ":memory:"

    private let queue: StoreQueue
    private let runner: StoreRunner
    /// Whether an event loop may commit its pass's saves itself: not when a
    /// commit waits for an fsync (`synchronousFull`), which a loop must not.
    private let loopsMayCommit: Bool
    /// Nil in memory, where there is no log to copy back.
    private let checkpointer: StoreCheckpointer?
    /// Commit latency and batch sizes, for `GET /metrics`.
    let stats: StoreStats
    /// Signalled once the writer thread has exited and closed the database.
    private let finished: DispatchSemaphore

    /// Opens the database at `path` (creating the file and its directory if
    /// missing; at ``inMemoryPath``, an empty database in memory) and
    /// migrates it, on the writer thread, which then stays to serve jobs.
    /// `synchronousFull` trades an fsync per commit for surviving power
    /// loss; without it, committed data survives a process crash but the
    /// last commits may be lost on power loss.
    public init(path: String, synchronousFull: Bool = false) throws(StoreError) {
        let queue = StoreQueue()
        let finished = DispatchSemaphore(value: 0)
        let opened = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<(StoreRunner, StoreCheckpointer?), StoreError>?>(nil)
        let stats = StoreStats()
        let thread = Thread {
            _ = cshim_name_thread("ringd-store")
            Self.serve(
                path: path, synchronousFull: synchronousFull, queue: queue, stats: stats, opened: opened,
                outcome: outcome)
            finished.signal()
        }
        thread.name = "ringd-store"
        thread.start()
        opened.wait()
        guard let opening = outcome.withLock({ $0 }) else {
            throw StoreError(.closed, "the store's thread exited without opening \(path)")
        }
        self.queue = queue
        self.finished = finished
        self.stats = stats
        loopsMayCommit = !synchronousFull
        (runner, checkpointer) = try opening.get()
    }

    /// The writer thread's body: opens the connection and the checkpointer,
    /// reports the outcome, runs the queue whenever jobs arrive until the
    /// store closes, stops the checkpointer. The connection is closed last,
    /// so its close checkpoints and removes the log. In memory there is no
    /// checkpointer: a second connection would open a database of its own.
    private static func serve(
        path: String, synchronousFull: Bool, queue: StoreQueue, stats: StoreStats,
        opened: DispatchSemaphore,
        outcome: borrowing Mutex<Result<(StoreRunner, StoreCheckpointer?), StoreError>?>
    ) {
        let connection: StoreConnection
        let checkpointer: StoreCheckpointer?
        do throws(StoreError) {
            connection = try StoreConnection(path: path, synchronousFull: synchronousFull)
            checkpointer = path == inMemoryPath ? nil : try StoreCheckpointer(path: path)
        } catch {
            outcome.withLock { $0 = .failure(error) }
            opened.signal()
            return
        }
        if let checkpointer {
            connection.database.onWALCommit { [unowned connection] frames in
                switch checkpointer.walCommitted(frames: frames) {
                case .proceed: break
                case .catchUp: connection.catchUpOwed = true
                case .catchUpAfterPass:
                    connection.catchUpOwed = true
                    connection.catchUpWaitsFor = checkpointer
                }
            }
        }
        let runner = StoreRunner(StoreWriter(connection: connection, queue: queue, stats: stats))
        outcome.withLock { $0 = .success((runner, checkpointer)) }
        opened.signal()
        while queue.waitForJobs() { runner.runOnWriterThread() }
        checkpointer?.stop()
        runner.close()
    }

    deinit { close() }

    /// Commits `changes` (each call's state after it, inserted or replacing
    /// the stored one by session id; both parties' histories read it from
    /// there) with whatever `recording` writes for them, in one transaction
    /// with the rest of the batch. All or nothing: if one call fails (e.g.
    /// ``StoreErrorCode/callConflict``: a change may not alter a call's
    /// parties) or `recording` throws, none is saved.
    ///
    /// Commits are chained: once one fails, every later commit fails with
    /// ``StoreErrorCode/chainBroken`` without running, until
    /// ``recoverChain(completion:)``, so the store never holds a change
    /// whose predecessors were lost. With `wakeWriter` false the caller owes
    /// a ``wakeWriter()`` or ``runQueuedOnLoop()`` call soon after, so that
    /// the commits of one event-loop pass commit together.
    ///
    /// `followsEarlierChanges` chains a commit of nothing too (a relayed
    /// `signal`): it fails like a change while the chain is broken, so it
    /// never acts on a change that was lost.
    ///
    /// The counter of the change sequence is raised to `reservingSeq` and
    /// `restartGrace` is applied in the same transaction.
    func commit(
        _ changes: [CallChange], reservingSeq: Int64? = nil, restartGrace: [RestartGraceChange] = [],
        wakeWriter: Bool = true, followsEarlierChanges: Bool = false,
        recording: (@Sendable (StoreConnection) throws(StoreError) -> Void)? = nil,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        let writes = !changes.isEmpty || reservingSeq != nil || !restartGrace.isEmpty
        let chained = writes || followsEarlierChanges
        submit(writes: writes, chained: chained, wakeWriter: wakeWriter, completion: completion) {
            connection throws(StoreError) in
            try Self.write(
                changes, reservingSeq: reservingSeq, restartGrace: restartGrace, recording: recording,
                on: connection)
        }
    }

    /// ``commit(_:reservingSeq:restartGrace:wakeWriter:recording:completion:)``,
    /// blocking until done (for start-up, before the server serves).
    func commitAndWait(
        _ changes: [CallChange], reservingSeq: Int64? = nil, restartGrace: [RestartGraceChange] = [],
        recording: (@Sendable (StoreConnection) throws(StoreError) -> Void)? = nil
    ) throws(StoreError) {
        let writes = !changes.isEmpty || reservingSeq != nil || !restartGrace.isEmpty
        try wait(writes: writes, chained: writes) { connection throws(StoreError) in
            try Self.write(
                changes, reservingSeq: reservingSeq, restartGrace: restartGrace, recording: recording,
                on: connection)
        }
    }

    private static func write(
        _ changes: [CallChange], reservingSeq: Int64?, restartGrace: [RestartGraceChange],
        recording: (@Sendable (StoreConnection) throws(StoreError) -> Void)?,
        on connection: StoreConnection
    ) throws(StoreError) {
        for change in changes { try connection.save(change.after) }
        if let reservingSeq { try connection.reserveChangeSeq(through: reservingSeq) }
        for change in restartGrace { try connection.apply(change) }
        try recording?(connection)
    }

    /// Reads the calls of `uid` changed after `seq` (at most `limit`), after
    /// every job queued before.
    func changedCalls(
        of uid: String, after seq: Int64, limit: Int, wakeWriter: Bool = true,
        completion: @escaping @Sendable (Result<ChangedCalls, StoreError>) -> Void
    ) {
        submit(writes: false, wakeWriter: wakeWriter, completion: completion) { connection throws(StoreError) in
            try connection.changedCalls(of: uid, after: seq, limit: limit)
        }
    }

    /// Starts the change chain afresh after a failed commit, once every
    /// commit queued before has failed or committed, and reads the calls the
    /// store holds as live then: what memory must be rebuilt from.
    func recoverChain(completion: @escaping @Sendable (Result<[Call], StoreError>) -> Void) {
        submit(writes: false, resetsChain: true, completion: completion) { connection throws(StoreError) in
            try connection.liveCalls()
        }
    }

    /// Makes the store fail where `hook` returns an error (tests, and crash
    /// tests of features built on the store); nil removes it.
    public func setFaultHook(_ hook: StoreFaultHook?) { queue.setFaultHook(hook) }

    /// Wakes the writer for the jobs queued without waking it.
    public func wakeWriter() { queue.wakeWriter() }

    /// For an event loop at the end of its pass: runs the jobs loops queued
    /// (`wakeWriter` false) here if they head the queue and the commit waits
    /// on nothing (``StoreRunner``), else wakes the writer for them. Their
    /// completions run here too, after the commit, as on the writer thread.
    func runQueuedOnLoop() {
        guard loopsMayCommit, runner.runOnLoopIfFree() else { return queue.wakeWriter() }
    }

    /// The number of batches event loops ran themselves.
    var loopBatchCount: Int { stats.loopBatches.load(ordering: .relaxed) }

    /// From a completion: runs `action` on the batch's thread once every
    /// completion of the current batch has run (to hand their results on
    /// together). Called anywhere else, it runs `action` at once.
    func afterBatch(_ action: @escaping @Sendable () -> Void) {
        guard runner.holdsConnection else { return action() }
        queue.afterBatch(action)
    }

    /// Whether the writer sleeps, waiting for a wake-up (jobs queued without
    /// one do not run until ``wakeWriter()``).
    var writerIsWaiting: Bool { queue.writerIsWaiting }

    /// Whether the caller is running a batch or its completions (on the
    /// writer thread or an event loop), where waiting for the store would
    /// wait for itself.
    var isRunningBatch: Bool { runner.holdsConnection }

    /// Fetches one page of `uid`'s call history, newest first. A query with
    /// an unknown cursor fails with ``StoreErrorCode/badCursor`` and one with
    /// a limit out of range with ``StoreErrorCode/badQuery``.
    public func callLogs(
        for uid: String, query: CallLogFilter,
        completion: @escaping @Sendable (Result<CallLogPage, StoreError>) -> Void
    ) {
        submit(writes: false, completion: completion) { connection throws(StoreError) in
            try connection.callLogs(for: uid, query: query)
        }
    }

    /// Fetches the call with `sessionId`; nil if none is stored.
    public func call(sessionId: String, completion: @escaping @Sendable (Result<Call?, StoreError>) -> Void) {
        submit(writes: false, completion: completion) { connection throws(StoreError) in
            try connection.call(sessionId: sessionId)
        }
    }

    /// Records that `uid`'s tokens issued at or before `revokedAt` (ms) are
    /// invalid. Revocations only move forward: an earlier time than the one
    /// stored changes nothing.
    public func saveRevocation(
        uid: String, revokedAt: Int64,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        submit(writes: true, completion: completion) { connection throws(StoreError) in
            try connection.saveRevocation(uid: uid, revokedAt: revokedAt)
        }
    }

    /// Every stored revocation, uid to `revokedAt`. Blocks until read (for
    /// start-up).
    public func loadRevocations() throws(StoreError) -> [String: Int64] {
        try wait(writes: false) { connection throws(StoreError) in try connection.revocations() }
    }

    /// The calls stored as `initiated` or `ongoing`, oldest first. Blocks until read.
    public func loadLiveCalls() throws(StoreError) -> [Call] {
        try wait(writes: false) { connection throws(StoreError) in try connection.liveCalls() }
    }

    /// What a start continues from: the live calls (oldest first), the
    /// restart grace deadlines, the highest position of the change
    /// sequence handed out or reserved, and the store's epoch.
    /// Blocks until read.
    public func loadContinuity() throws(StoreError) -> StoreContinuity {
        try wait(writes: false) { connection throws(StoreError) in
            StoreContinuity(
                liveCalls: try connection.liveCalls(),
                restartGraceDeadlines: try connection.restartGraceDeadlines(),
                lastSeq: try connection.lastChangeSeq(), epoch: try connection.storeEpoch(),
                users: try connection.users())
        }
    }

    /// Blocks until every job queued before the call has completed (its
    /// completion returned) and what the completions deferred with
    /// ``afterBatch(_:)`` has run. Returns at once from a completion, where it
    /// cannot wait.
    public func flush() {
        guard !runner.holdsConnection else { return }
        let done = DispatchSemaphore(value: 0)
        submit(writes: false, completion: { [self] _ in afterBatch { done.signal() } }) { _ throws(StoreError) in }
        done.wait()
    }

    /// Runs every job queued so far, refuses new ones, stops the writer
    /// thread and closes the database; blocks until all that is done.
    /// Idempotent. From a completion it does not wait: the current batch
    /// ends, the writer thread runs the queue, then exits.
    public func close() {
        queue.stop()
        guard !runner.holdsConnection else { return }
        finished.wait()
        finished.signal()
    }

    /// The number of checkpoints the checkpointer thread has run (none in memory).
    var checkpointCount: Int { checkpointer?.checkpointCount ?? 0 }

    /// The number of batches the writer has run: each write batch is one
    /// transaction, however many jobs it held.
    public var batchCount: Int { queue.batchCount }

    /// Queues a job running `body`, or refuses it (``StoreErrorCode/closed``).
    func submit<Value: Sendable>(
        writes: Bool, chained: Bool = false, resetsChain: Bool = false,
        wakeWriter: Bool = true,
        completion: @escaping @Sendable (Result<Value, StoreError>) -> Void,
        _ body: @escaping @Sendable (StoreConnection) throws(StoreError) -> Value
    ) {
        let job = StoreJob(
            writes: writes, chained: chained, resetsChain: resetsChain, body: body, completion: completion)
        guard queue.push(job, wakeWriter: wakeWriter) else {
            job.fail(StoreError(.closed, "the call store is closed"))
            return
        }
    }

    /// Queues a job running `body` and blocks until it completed.
    func wait<Value: Sendable>(
        writes: Bool, chained: Bool = false,
        _ body: @escaping @Sendable (StoreConnection) throws(StoreError) -> Value
    )
        throws(StoreError) -> Value
    {
        guard !runner.holdsConnection else {
            throw StoreError(.reentrant, "a blocking call store method was called from a store completion")
        }
        let outcome = Mutex<Result<Value, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        submit(
            writes: writes, chained: chained,
            completion: { result in
                outcome.withLock { $0 = result }
                done.signal()
            }, body)
        done.wait()
        guard let result = outcome.withLock({ $0 }) else {
            throw StoreError(.closed, "the call store finished without running the job")
        }
        return try result.get()
    }
}
