import Dispatch
import Synchronization

/// A unit of store work: queued by any thread, run by the holder of the
/// writer's connection (``StoreRunner``).
struct StoreJob: Sendable {
    /// Whether the job writes; a batch with a writing job runs in a transaction.
    let writes: Bool
    /// Whether the job is a link of the change chain: each change may build
    /// on the ones queued before it, so once one fails, every later link
    /// fails without running until a job that ``resetsChain``.
    let chained: Bool
    /// Whether the job starts the chain afresh (it runs after every link
    /// queued before it has failed or committed).
    let resetsChain: Bool
    /// Does the work on the writer's connection; the outcome is reported
    /// only once the batch committed.
    let run: @Sendable (StoreConnection) -> StoreJobOutcome
    /// Reports `error` instead of the outcome: the batch failed, or the job
    /// was refused.
    let fail: @Sendable (StoreError) -> Void
    /// Whether an event loop's pass queued the job without waking the writer
    /// thread, to commit it at the pass's end: the only jobs a loop runs
    /// (``StoreQueue/takeLoopBatch()``). Set by ``StoreQueue/push(_:wakeWriter:)``.
    fileprivate(set) var fromLoopPass = false

    /// A job running `body` and handing its result to `completion`.
    init<Value: Sendable>(
        writes: Bool, chained: Bool = false, resetsChain: Bool = false,
        body: @escaping @Sendable (StoreConnection) throws(StoreError) -> Value,
        completion: @escaping @Sendable (Result<Value, StoreError>) -> Void
    ) {
        self.writes = writes
        self.chained = chained
        self.resetsChain = resetsChain
        run = { connection in
            let result = Result { () throws(StoreError) in try body(connection) }
            let error: StoreError? = if case .failure(let error) = result { error } else { nil }
            return StoreJobOutcome(error: error) { completion(result) }
        }
        fail = { completion(.failure($0)) }
    }

    /// The outcome of not running the job: it reports `error`.
    func refused(_ error: StoreError) -> StoreJobOutcome {
        StoreJobOutcome(error: error) { [fail] in fail(error) }
    }
}

/// What a job did, held until its batch commits.
struct StoreJobOutcome {
    /// The job's own failure (its changes were rolled back), if it failed.
    let error: StoreError?
    /// Calls the job's completion with its result.
    let report: () -> Void
}

/// The store's job queue: a locked FIFO that any thread appends to and the
/// holder of the writer's connection (``StoreRunner``) drains a whole batch
/// at a time, plus the semaphore that wakes the writer thread.
final class StoreQueue: Sendable {
    /// The queue proper, under the lock.
    private struct State {
        /// Jobs not yet taken, oldest first.
        var jobs: [StoreJob] = []
        /// Whether the writer found the queue empty and waits for `wake`.
        var writerWaiting = false
        /// Whether the store is closing: no job is accepted any more.
        var stopping = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let batches = Atomic<Int>(0)
    private let batchEndActions = Mutex<[@Sendable () -> Void]>([])
    private let faultHook = Mutex<StoreFaultHook?>(nil)

    /// Installs (or with nil removes) the hook that makes the store fail on demand.
    func setFaultHook(_ hook: StoreFaultHook?) { faultHook.withLock { $0 = hook } }

    /// The failure the hook asks for at `point`, if any.
    func fault(at point: StoreFaultPoint) -> StoreError? { faultHook.withLock { $0 }?(point) }

    /// Appends `job`, waking the writer if it sleeps, unless `wakeWriter`
    /// is false: then the caller owes a ``wakeWriter()`` call (or a run of
    /// the queue, ``CallStore/runQueuedOnLoop()``) soon after
    /// (so that several jobs queued together wake the writer once). False
    /// (the job is not queued) once the store is closing.
    func push(_ job: StoreJob, wakeWriter: Bool = true) -> Bool {
        var job = job
        job.fromLoopPass = !wakeWriter
        let (accepted, mustWake) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            state.jobs.append(job)
            guard wakeWriter else { return (true, false) }
            let sleeping = state.writerWaiting
            state.writerWaiting = false
            return (true, sleeping)
        }
        if mustWake { wake.signal() }
        return accepted
    }

    /// Wakes the writer if it sleeps while jobs wait.
    func wakeWriter() {
        let mustWake = state.withLock { state in
            guard state.writerWaiting, !state.jobs.isEmpty else { return false }
            state.writerWaiting = false
            return true
        }
        if mustWake { wake.signal() }
    }

    /// For the writer, from a job's completion: runs `action` once every
    /// completion of the current batch has run.
    func afterBatch(_ action: @escaping @Sendable () -> Void) {
        batchEndActions.withLock { $0.append(action) }
    }

    /// For the writer, after a batch's completions: runs what they deferred
    /// with ``afterBatch(_:)`` (and what those actions defer in turn).
    func runBatchEndActions() {
        while true {
            let actions = batchEndActions.withLock { actions in
                let taken = actions
                actions.removeAll()
                return taken
            }
            if actions.isEmpty { return }
            for action in actions { action() }
        }
    }

    /// Refuses jobs from now on; the writer runs those already queued, then exits.
    func stop() {
        let mustWake = state.withLock { state in
            state.stopping = true
            let sleeping = state.writerWaiting
            state.writerWaiting = false
            return sleeping
        }
        if mustWake { wake.signal() }
    }

    /// For the writer thread: sleeps until a job is queued; false once the
    /// store is closing and the queue is empty. The jobs may be gone by the
    /// time the caller holds the connection (a loop ran them).
    func waitForJobs() -> Bool {
        while true {
            let wait = state.withLock { state -> Bool? in
                if !state.jobs.isEmpty { return false }
                if state.stopping { return nil }
                state.writerWaiting = true
                return true
            }
            switch wait {
            case nil: return false
            case false?: return true
            case true?: wake.wait()
            }
        }
    }

    /// For whoever holds the writer's connection: every queued job, as one
    /// batch; nil when there is none.
    func takeBatch() -> [StoreJob]? {
        let batch = state.withLock { state -> [StoreJob] in
            let batch = state.jobs
            state.jobs = []
            return batch
        }
        guard !batch.isEmpty else { return nil }
        batches.add(1, ordering: .relaxed)
        return batch
    }

    /// For an event loop holding the writer's connection: the jobs at the
    /// head of the queue that loops' passes queued (``StoreJob/fromLoopPass``),
    /// as one batch, up to the first job of another thread, which stays
    /// queued with everything behind it, for the writer thread (its push
    /// woke it). So a loop never runs another thread's read or prune, and
    /// never overtakes a job queued before its own.
    func takeLoopBatch() -> LoopBatch {
        let taken = state.withLock { state -> LoopBatch in
            let end = state.jobs.firstIndex { !$0.fromLoopPass } ?? state.jobs.count
            if end == 0 { return state.jobs.isEmpty ? .nothingQueued : .othersFirst }
            guard end < state.jobs.count else {
                defer { state.jobs = [] }
                return .batch(state.jobs)
            }
            defer { state.jobs.removeFirst(end) }
            return .batch(Array(state.jobs[..<end]))
        }
        if case .batch = taken { batches.add(1, ordering: .relaxed) }
        return taken
    }

    /// For the holder of the writer's connection: queues `batch` again
    /// ahead of every job, as it was before ``takeLoopBatch()`` took it (none
    /// of its jobs has reported), for the writer thread to run.
    func putBack(_ batch: [StoreJob]) {
        state.withLock { $0.jobs.insert(contentsOf: batch, at: 0) }
        batches.subtract(1, ordering: .relaxed)
    }

    /// Whether the writer sleeps, waiting for a wake-up.
    var writerIsWaiting: Bool { state.withLock { $0.writerWaiting } }

    /// The number of batches handed to the writer so far.
    var batchCount: Int { batches.load(ordering: .relaxed) }
}

/// What ``StoreQueue/takeLoopBatch()`` found.
enum LoopBatch {
    /// The jobs a loop runs, in queue order.
    case batch([StoreJob])
    /// Nothing is queued.
    case nothingQueued
    /// Another thread's job heads the queue: the writer thread runs it first.
    case othersFirst
}
