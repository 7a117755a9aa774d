import Dispatch
import SignalProtocol
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// An event loop commits the saves of its pass itself when the writer's
/// connection is free (``CallStore/runQueuedOnLoop()``), and never waits for it.
@Suite(.blocking) struct CallStoreLoopCommitTests {
    /// The queued saves commit as one batch on the calling thread: every
    /// completion, and what they deferred, has run when the call returns.
    @Test(arguments: StoreLocation.allCases)
    func aLoopCommitsItsQueuedSavesItself(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        // Queued before the writer thread first sleeps, the saves could be
        // taken by it instead.
        #expect(waitUntil(timeout: storeTestTimeout) { store.writerIsWaiting })
        let batchesBefore = store.batchCount
        let threads = Mutex<[UInt]>([])
        let deferred = Atomic<Int>(0)
        for index in 1 ... 3 {
            store.save([storedCall(index)], wakeWriter: false) { result in
                if case .success = result { threads.withLock { $0.append(UInt(pthread_self())) } }
                store.afterBatch { deferred.add(1, ordering: .relaxed) }
            }
        }
        store.runQueuedOnLoop()
        let here = UInt(pthread_self())
        #expect(threads.withLock { $0 } == [here, here, here])
        #expect(deferred.load(ordering: .relaxed) == 3)
        #expect(store.batchCount - batchesBefore == 1)
        #expect(store.loopBatchCount == 1)
        #expect(try store.logs("alice").logs.count == 3)
    }

    /// While the writer thread holds the connection (its batch's completion
    /// is parked), a loop does not wait: the call returns at once and the
    /// writer thread commits the loop's save after its own batch.
    @Test(arguments: StoreLocation.allCases)
    func aLoopNeverWaitsForABusyConnection(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        let gate = try WriterGate(store)
        let thread = Mutex<UInt?>(nil)
        let counter = CompletionCounter()
        store.save([storedCall(1)], wakeWriter: false) { result in
            if case .success = result { thread.withLock { $0 = UInt(pthread_self()) } }
            counter.signal()
        }
        store.runQueuedOnLoop()
        #expect(thread.withLock { $0 } == nil)
        gate.release()
        #expect(counter.wait(for: 1))
        let committedOn = try #require(thread.withLock { $0 })
        #expect(committedOn != UInt(pthread_self()))
        #expect(store.loopBatchCount == 0)
    }

    /// With an fsync per commit (`store.synchronous: full`) a loop never
    /// commits: the writer thread is woken for its saves.
    @Test func withAnFsyncPerCommitTheWriterThreadCommits() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath, synchronousFull: true)
        defer { store.close() }
        let thread = Mutex<UInt?>(nil)
        let counter = CompletionCounter()
        store.save([storedCall(1)], wakeWriter: false) { result in
            if case .success = result { thread.withLock { $0 = UInt(pthread_self()) } }
            counter.signal()
        }
        store.runQueuedOnLoop()
        #expect(counter.wait(for: 1))
        let committedOn = try #require(thread.withLock { $0 })
        #expect(committedOn != UInt(pthread_self()))
        #expect(store.loopBatchCount == 0)
    }
}
