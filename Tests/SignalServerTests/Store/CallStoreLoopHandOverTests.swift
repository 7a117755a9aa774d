import Dispatch
import SignalProtocol
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// What an event loop leaves to the writer thread instead of running it
/// (``CallStore/runQueuedOnLoop()``): other threads' jobs and everything
/// behind them, a commit that would wait for another process's write lock
/// or start the log over, and a batch a job of which failed. The loop
/// returns at once, and the writer thread runs the batch in queue order.
@Suite(.blocking) struct CallStoreLoopHandOverTests {
    /// A job that does nothing, queued as a loop's pass queues its jobs
    /// (`wakeWriter` false) or as any other thread does.
    private static func push(_ queue: StoreQueue, fromLoopPass: Bool) {
        let job = StoreJob(writes: false, body: { _ throws(StoreError) in }, completion: { _ in })
        #expect(queue.push(job, wakeWriter: !fromLoopPass))
    }

    @Test func aLoopTakesOnlyTheLoopJobsAtTheHeadOfTheQueue() {
        let queue = StoreQueue()
        Self.push(queue, fromLoopPass: true)
        Self.push(queue, fromLoopPass: false)
        Self.push(queue, fromLoopPass: true)
        guard case .batch(let first) = queue.takeLoopBatch() else { Issue.record("no batch"); return }
        #expect(first.count == 1)
        guard case .othersFirst = queue.takeLoopBatch() else { Issue.record("took another thread's job"); return }
        #expect(queue.takeBatch()?.count == 2)
        guard case .nothingQueued = queue.takeLoopBatch() else { Issue.record("the queue is not empty"); return }
    }

    /// A store file, a first call saved, and the writer thread asleep.
    private static func openStore(_ directory: TemporaryDirectory) throws -> CallStore {
        let store = try CallStore(path: directory.databasePath)
        let counter = CompletionCounter()
        store.save([storedCall(1)]) { _ in counter.signal() }
        #expect(counter.wait(for: 1))
        #expect(waitUntil(timeout: storeTestTimeout) { store.writerIsWaiting })
        return store
    }

    /// How a save completed: on which thread, with which error.
    private final class Completion: Sendable {
        private let state = Mutex<(thread: UInt, error: StoreError?)?>(nil)
        func record(_ error: StoreError?) { state.withLock { $0 = (UInt(pthread_self()), error) } }
        var thread: UInt? { state.withLock { $0?.thread } }
        var error: StoreError? { state.withLock { $0?.error } }
    }

    /// Saves `call` as a loop's pass does and runs the queue as at its end:
    /// how the save completes, and how long the run took.
    private static func saveOnLoop(
        _ call: Call, in store: CallStore, counter: CompletionCounter
    ) -> (Completion, seconds: Double) {
        let completion = Completion()
        store.save([call], wakeWriter: false) { result in
            if case .failure(let error) = result { completion.record(error) } else { completion.record(nil) }
            counter.signal()
        }
        let start = monotonicSeconds()
        store.runQueuedOnLoop()
        return (completion, monotonicSeconds() - start)
    }

    @Test func aLoopDoesNotWaitForAnotherProcesssWriteLock() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.openStore(directory)
        defer { store.close() }
        let foreign = try ForeignStoreConnection(path: directory.databasePath)
        try foreign.execute("BEGIN IMMEDIATE")
        let counter = CompletionCounter()
        let (saved, seconds) = Self.saveOnLoop(storedCall(2), in: store, counter: counter)
        #expect(seconds < 1, "the loop waited \(seconds) s (the busy timeout is 5 s)")
        #expect(saved.thread == nil)
        try foreign.execute("ROLLBACK")
        #expect(counter.wait(for: 1))
        #expect(saved.error == nil)
        #expect(saved.thread != UInt(pthread_self()))
        #expect(store.loopBatchCount == 0)
    }

    /// With every frame of the log copied back, the next commit starts the
    /// log over and syncs its header: the writer thread's. The commit after
    /// appends again, and the loop runs it.
    @Test func aLoopLeavesTheLogRestartToTheWriterThread() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.openStore(directory)
        defer { store.close() }
        let copied = try #require(try ForeignStoreConnection(path: directory.databasePath).checkpoint())
        #expect(copied.log > 0 && copied.copied == copied.log, "\(copied)")
        let counter = CompletionCounter()
        let (restarting, _) = Self.saveOnLoop(storedCall(2), in: store, counter: counter)
        #expect(counter.wait(for: 1))
        #expect(restarting.thread != UInt(pthread_self()))
        #expect(store.loopBatchCount == 0)
        #expect(waitUntil(timeout: storeTestTimeout) { store.writerIsWaiting })
        let (appending, _) = Self.saveOnLoop(storedCall(3), in: store, counter: counter)
        #expect(appending.thread == UInt(pthread_self()))
        #expect(store.loopBatchCount == 1)
        #expect(try store.logs("alice").logs.count == 3)
    }

    /// A loop does not replay a batch whose job failed: the writer thread
    /// does, and the chain holds there (the failed change's successor is refused).
    @Test func aLoopLeavesAFailedBatchToTheWriterThread() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.openStore(directory)
        defer { store.close() }
        let counter = CompletionCounter()
        let failures = Mutex<[StoreErrorCode?]>([])
        let threads = Mutex<Set<UInt>>([])
        // The second changes the parties of the first call: a conflict.
        for call in [storedCall(2), storedCall(1, "carol", "dave"), storedCall(3)] {
            store.save([call], wakeWriter: false) { result in
                threads.withLock { _ = $0.insert(UInt(pthread_self())) }
                failures.withLock { failures in
                    if case .failure(let error) = result { failures.append(error.code) } else { failures.append(nil) }
                }
                counter.signal()
            }
        }
        store.runQueuedOnLoop()
        #expect(counter.wait(for: 3))
        #expect(failures.withLock { $0 } == [nil, .callConflict, .chainBroken])
        #expect(!threads.withLock { $0 }.contains(UInt(pthread_self())))
        #expect(store.loopBatchCount == 0)
    }
}
