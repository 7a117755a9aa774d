import Foundation
import Synchronization

/// The node's workers (`cluster.workers`), each a thread with a connection
/// of its own running transactions one at a time, and the admission of
/// inputs to them (`cluster.maxQueuedInputs`).
///
/// Routing keeps order where it matters: an input goes to the worker its
/// key hashes to (a device's inputs and reads by its uid, a call's by its
/// session id), so one user's inputs, and the reads that follow them, run
/// in the order they came. Inputs of different users run side by side;
/// every transaction takes its users' locks in one global order
/// (``ClusterTransaction``), so two workers wait for each other at most as
/// two nodes do, never in a cycle.
///
/// Admission bounds what waits: inputs queued across the workers, not yet
/// started, are counted, and beyond the limit a request or a connect is
/// refused at once with a time to come back rather than queued to wait
/// longer than its client would. A disconnect or a timer is always queued:
/// dropping one would leave presence or a call wrong.
final class ClusterWorkers: Sendable {
    let all: [ClusterWorker]
    /// Inputs queued beyond which requests and connects are refused.
    let limit: Int
    /// Inputs queued on any worker and not yet started.
    private let queuedInputs = Atomic<Int>(0)
    /// Requests and connects refused because the queue was full.
    private let shedInputs = Atomic<Int>(0)
    /// How long inputs waited in the queue, in seconds.
    let waitSeconds = Histogram(bounds: Histogram.shortSeconds)
    /// How long an input's job ran, in µs: a moving average, for the time
    /// a refused client is told to wait.
    private let runMicros = Atomic<Int>(1000)

    init(count: Int, url: String, leaseSeconds: Double, maxQueuedInputs: Int) {
        all = (0 ..< max(1, count)).map { ClusterWorker(url: url, leaseSeconds: leaseSeconds, index: $0) }
        limit = maxQueuedInputs
    }

    func start() { for worker in all { worker.start() } }

    /// The worker of the jobs that are nobody's in particular and keep one
    /// order among themselves as with a single worker: maintenance rounds
    /// (one at a time) and the stop's reap after them, the webhook leader's
    /// claims and the attempts it records, push token changes.
    var first: ClusterWorker { all[0] }

    /// The worker of `key` (a uid, a session id): always the same one.
    func worker(for key: String) -> ClusterWorker {
        // The advisory lock key's hash: a well-mixed 64 bits of the key.
        all[Int(UInt64(bitPattern: PostgresConnection.lockKey(key)) % UInt64(all.count))]
    }

    /// Why some worker cannot run transactions now, for `/readyz`; nil
    /// while every one can (a node that can run only some users' inputs
    /// is better left by balancers).
    var unavailable: String? { all.lazy.compactMap(\.unavailable).first }

    /// Inputs queued and not yet started, across the workers.
    var depth: Int { queuedInputs.load(ordering: .relaxed) }

    /// Requests and connects refused since start because the queue was full.
    var shed: Int { shedInputs.load(ordering: .relaxed) }

    /// Whether the queue is full: a WebSocket upgrade is refused then.
    var isFull: Bool {
        depth >= limit
    }

    /// When a refused client may try again: about how long the queue
    /// takes to drain at the pace jobs run now, from 100 ms to 10 s.
    var retryAfterMillis: Int64 {
        let drain = depth * runMicros.load(ordering: .relaxed) / all.count / 1000
        return Int64(min(10_000, max(100, drain)))
    }

    /// Counts the refusal of an upgrade, which queued nothing.
    func countShed() { shedInputs.add(1, ordering: .relaxed) }

    /// Queues the job of an input on `worker`, counted in ``depth`` until
    /// it starts. A `sheddable` one (a request, a connect) is not queued,
    /// and false returned, while ``depth`` is at the limit.
    func submitInput(on worker: ClusterWorker, sheddable: Bool, _ job: @escaping ClusterWorker.Job) -> Bool {
        submitInput(on: worker, sheddable: sheddable, .job(job))
    }

    /// Queues `work`, an input, on `worker`, as the job of one is above.
    func submitInput(on worker: ClusterWorker, sheddable: Bool, _ work: ClusterWorker.Work) -> Bool {
        if sheddable {
            var current = queuedInputs.load(ordering: .relaxed)
            while true {
                guard current < limit else {
                    shedInputs.add(1, ordering: .relaxed)
                    return false
                }
                let (exchanged, original) = queuedInputs.compareExchange(
                    expected: current, desired: current + 1, ordering: .relaxed)
                if exchanged { break }
                current = original
            }
        } else {
            queuedInputs.add(1, ordering: .relaxed)
        }
        let queuedAt = DispatchTime.now().uptimeNanoseconds
        switch work {
        case .job(let job):
            worker.submit { [self] db in counted(queuedAt: queuedAt) { job(db) } }
        case .transaction(let transaction):
            worker.submit(
                .transaction(
                    ClusterWorker.Transaction(start: transaction.start) { [self] db, prefetched, next in
                        counted(queuedAt: queuedAt) { transaction.run(db, prefetched, next) }
                    }))
        }
        return true
    }

    /// Runs an input's `body`, counting it out of ``depth`` and into the wait and run times.
    private func counted(queuedAt: UInt64, _ body: () -> Void) {
        queuedInputs.subtract(1, ordering: .relaxed)
        let started = DispatchTime.now().uptimeNanoseconds
        waitSeconds.observe(Double(started - queuedAt) / 1e9)
        body()
        let ran = Int((DispatchTime.now().uptimeNanoseconds - started) / 1000)
        // A moving average over about the last 16 jobs: steady, yet following a slower database soon.
        // Workers race on it; an update lost to another only slows how fast it follows.
        let average = runMicros.load(ordering: .relaxed)
        runMicros.store(average + (ran - average) / 16, ordering: .relaxed)
    }

    /// Runs `body` once every worker has run what was queued on it before
    /// this call: for what must not overtake a job on whichever worker
    /// (a push stop, behind the ring its call's transaction handed over).
    func afterQueued(_ body: @escaping @Sendable () -> Void) {
        let countdown = Countdown(all.count)
        for worker in all {
            worker.submit { _ in if countdown.arrive() { body() } }
        }
    }

    /// Stops every worker after what is queued on it, or at `deadline`;
    /// `last` runs on the first worker once the others stopped (so after
    /// every input they had), before that one stops. Whether all of it
    /// was done by the deadline.
    func stop(by deadline: DispatchTime = .distantFuture, last: ClusterWorker.Job? = nil) -> Bool {
        var done = true
        for worker in all.dropFirst() where !worker.stop(by: deadline) { done = false }
        if let last { first.submit(last) }
        return first.stop(by: deadline) && done
    }
}

/// Counts arrivals down to the last.
private final class Countdown: Sendable {
    private let left: Atomic<Int>

    init(_ count: Int) { left = Atomic(count) }

    /// Whether this was the last arrival.
    func arrive() -> Bool { left.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }
}
