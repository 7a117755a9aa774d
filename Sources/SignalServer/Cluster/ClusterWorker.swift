import Foundation
import Synchronization

/// The thread that runs this node's PostgreSQL transactions, one at a
/// time, in the order they were submitted (so one device's requests are
/// decided in the order it sent them), on a connection of its own. Loops
/// only queue work here; nothing on a loop waits for the database.
final class ClusterWorker: Sendable {
    /// Work for the connection; it runs on the worker's thread.
    typealias Job = @Sendable (PostgresConnection?) -> Void

    private struct Queue {
        var jobs: [Job] = []
        var stopping = false
    }

    private let url: String
    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Called on the worker's thread when its connection broke.
    private let lost: @Sendable (PostgresError) -> Void

    init(url: String, lost: @escaping @Sendable (PostgresError) -> Void) {
        self.url = url
        self.lost = lost
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "ringd-cluster"
        thread.start()
    }

    /// Queues `job`; it gets the connection, or nil when the database
    /// cannot be reached right now.
    func submit(_ job: @escaping Job) {
        let accepted = queue.withLock { queue in
            guard !queue.stopping else { return false }
            queue.jobs.append(job)
            return true
        }
        if accepted { wake.signal() } else { job(nil) }
    }

    /// Runs what is queued, then stops the thread and waits for it.
    func stop() {
        queue.withLock { $0.stopping = true }
        wake.signal()
        done.wait()
    }

    private func run() {
        defer { done.signal() }
        var connection: PostgresConnection?
        while true {
            wake.wait()
            let (jobs, stopping) = queue.withLock { queue in
                defer { queue.jobs = [] }
                return (queue.jobs, queue.stopping)
            }
            for job in jobs {
                if connection == nil { connection = try? PostgresConnection(url: url) }
                job(connection)
                if let open = connection, !open.isOpen {
                    connection = nil
                    lost(PostgresError(sqlState: nil, message: "the connection to PostgreSQL broke"))
                }
            }
            if stopping && queue.withLock({ $0.jobs.isEmpty }) { return }
        }
    }
}
