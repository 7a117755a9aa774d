import Foundation
import Synchronization
import Testing

/// Runs each test of a suite on threads of its own instead of Swift's
/// cooperative pool. Tests that block (on sockets, processes, semaphores)
/// would otherwise hold the pool's few threads (two on two cores) for
/// seconds, and every async test in the same run would stall behind them.
public struct DedicatedThreadTrait: SuiteTrait, TestTrait, TestScoping {
    let executor: any TaskExecutor
    /// How many of the trait's tests may run at once, if bounded.
    let limit: TestConcurrencyLimit?

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        await limit?.acquire()
        defer { limit?.release() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == DedicatedThreadTrait {
    /// The suite's tests block: run them on ``BlockingTestExecutor``'s threads.
    public static var blocking: Self { DedicatedThreadTrait(executor: BlockingTestExecutor.shared, limit: nil) }

    /// The suite's tests await and measure time: every job of theirs starts
    /// at once on a thread of its own (``ThreadPerJobExecutor``), never
    /// queued behind a blocking test; a few such tests run at a time, so
    /// that they do not crowd the CPU out from under each other.
    public static var prompt: Self {
        DedicatedThreadTrait(executor: ThreadPerJobExecutor.shared, limit: TestConcurrencyLimit.prompt)
    }
}

/// A counting semaphore that suspends instead of blocking a thread.
final class TestConcurrencyLimit: Sendable {
    static let prompt = TestConcurrencyLimit(2)

    private let state: Mutex<(available: Int, waiting: [CheckedContinuation<Void, Never>])>

    init(_ count: Int) { state = Mutex((count, [])) }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.available > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.available -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.available += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// A task executor that runs every job on a new thread.
final class ThreadPerJobExecutor: TaskExecutor {
    static let shared = ThreadPerJobExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        thread.name = "test-prompt"
        thread.start()
    }
}

/// A task executor with a fixed set of threads of its own: blocking jobs
/// hold these, never the cooperative pool, and no more of them run at once
/// than it has threads, so timing-sensitive tests are not crowded out.
final class BlockingTestExecutor: TaskExecutor {
    static let shared = BlockingTestExecutor(threads: ProcessInfo.processInfo.activeProcessorCount + 1)

    private let jobs = Mutex<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)

    private init(threads: Int) {
        for index in 0 ..< threads {
            let thread = Thread { [self] in
                while true {
                    available.wait()
                    guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }
            thread.name = "test-blocking-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }
}
