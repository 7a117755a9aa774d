import Dispatch
import SignalProtocol
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

/// Saves queued without waking the writer, and work deferred to the end of
/// a batch: how an event loop's pass and a batch's deliveries are grouped.
@Suite(.blocking) struct CallStoreBatchTests {
    /// Saves queued with `wakeWriter: false` wait, while the writer sleeps,
    /// for ``CallStore/wakeWriter()``, and then commit together.
    @Test(arguments: StoreLocation.allCases)
    func savesQueuedWithoutAWakeCommitTogetherOnceWoken(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        #expect(waitUntil(timeout: storeTestTimeout) { store.writerIsWaiting })
        let batchesBefore = store.batchCount
        let completed = Atomic<Int>(0)
        let counter = CompletionCounter()
        for index in 1 ... 3 {
            store.save([storedCall(index)], wakeWriter: false) { result in
                if case .success = result { completed.add(1, ordering: .relaxed) }
                counter.signal()
            }
        }
        let beforeTheWake = (
            store.writerIsWaiting, completed.load(ordering: .relaxed), store.batchCount - batchesBefore
        )
        #expect(beforeTheWake == (true, 0, 0))
        store.wakeWriter()
        #expect(counter.wait(for: 3))
        #expect(store.batchCount - batchesBefore == 1)
        #expect(try store.logs("alice").logs.count == 3)
    }

    /// Actions a batch's completions defer run after the last completion of
    /// that batch, in the order they were deferred; `flush()` waits for
    /// them. What those actions defer in turn runs next.
    @Test(arguments: StoreLocation.allCases)
    func afterBatchActionsRunOnceEveryCompletionHasRun(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        let order = Mutex<[String]>([])
        let nested = CompletionCounter()
        let gate = try WriterGate(store)
        for index in 1 ... 3 {
            store.save([storedCall(index)]) { _ in
                order.withLock { $0.append("completion \(index)") }
                store.afterBatch {
                    order.withLock { $0.append("after \(index)") }
                    store.afterBatch {
                        order.withLock { $0.append("nested \(index)") }
                        nested.signal()
                    }
                }
            }
        }
        gate.release()
        store.flush()
        #expect(
            order.withLock { Array($0.prefix(6)) } == [
                "completion 1", "completion 2", "completion 3",
                "after 1", "after 2", "after 3",
            ])
        #expect(nested.wait(for: 3))
        #expect(order.withLock { Array($0.dropFirst(6)) } == ["nested 1", "nested 2", "nested 3"])
    }

    /// Outside a completion there is no batch to wait for: the action runs at once.
    @Test(arguments: StoreLocation.allCases)
    func afterBatchOutsideTheWriterRunsAtOnce(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        let ran = Atomic<Bool>(false)
        store.afterBatch { ran.store(true, ordering: .relaxed) }
        let afterwards = ran.load(ordering: .relaxed)
        #expect(afterwards)
    }
}
