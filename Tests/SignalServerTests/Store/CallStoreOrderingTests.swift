import Dispatch
import SignalProtocol
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

/// The writer thread: FIFO completions after commit, group commit, reads
/// ordered with writes, whole-batch failure, and blocking calls made from a
/// completion.
@Suite(.blocking) struct CallStoreOrderingTests {
    /// Many threads each queue single saves; the completions come in exactly
    /// the order the jobs were queued.
    @Test(arguments: StoreLocation.allCases)
    func completionsComeInQueueOrder(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        let queued = Mutex<[Int]>([])
        let completed = Mutex<[Int]>([])
        let counter = CompletionCounter()
        let threads = 8, perThread = 150
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for round in 0 ..< perThread {
                let index = thread * perThread + round
                // Queued under the lock, so `queued` holds the true queue order.
                queued.withLock { order in
                    order.append(index)
                    store.save([storedCall(index, "u\(thread)", "v\(round % 5)")]) { result in
                        if case .success = result { completed.withLock { $0.append(index) } }
                        counter.signal()
                    }
                }
            }
        }
        #expect(counter.wait(for: threads * perThread))
        #expect(completed.withLock { $0 } == queued.withLock { $0 })
        #expect(try store.logs("v0", CallLogFilter(limit: 100)).logs.count == 100)
    }

    /// When a completion runs, its batch has committed: a separate
    /// connection already sees the data.
    @Test func completionsRunAfterCommit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath)
        defer { store.close() }
        let path = directory.databasePath
        let visible = Mutex<[Bool]>([])
        let counter = CompletionCounter()
        let gate = try WriterGate(store)
        for index in 0 ..< 20 {
            store.save([storedCall(index)]) { _ in
                let seen = Result { () throws -> Int64? in
                    let database = try SQLiteDatabase(path: path)
                    return try database.fetchOne(
                        "SELECT count(*) FROM calls WHERE session_id = ?1", "session-\(index)"
                    ) { $0.int64(0) }
                }
                visible.withLock { $0.append((try? seen.get()) == 1) }
                counter.signal()
            }
        }
        gate.release()
        #expect(counter.wait(for: 20))
        #expect(visible.withLock { $0 } == Array(repeating: true, count: 20))
    }

    /// Everything queued while the writer is busy runs as one batch (one
    /// transaction), and every job completes.
    @Test(arguments: StoreLocation.allCases)
    func groupCommitRunsAQueuedBurstAsOneBatch(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        let gate = try WriterGate(store)
        let batchesBefore = store.batchCount
        let succeeded = Atomic<Int>(0)
        let counter = CompletionCounter()
        let threads = 8, perThread = 125
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for round in 0 ..< perThread {
                let index = thread * perThread + round
                store.save([storedCall(index, "caller\(thread)", "callee")]) { result in
                    if case .success = result { succeeded.add(1, ordering: .relaxed) }
                    counter.signal()
                }
            }
        }
        gate.release()
        #expect(counter.wait(for: threads * perThread))
        #expect(succeeded.load(ordering: .relaxed) == threads * perThread)
        #expect(store.batchCount - batchesBefore == 1)
        #expect(try store.allLogs("callee", CallLogFilter(limit: 100)).count == threads * perThread)
        #expect(try store.allLogs("caller3", CallLogFilter(limit: 100)).count == perThread)
    }

    /// A burst without a gate still completes, in fewer batches than jobs
    /// once the writer falls behind (not asserted: timing dependent).
    @Test(arguments: StoreLocation.allCases)
    func unthrottledBurstCompletes(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        let counter = CompletionCounter()
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0 ..< 250 {
                store.save([storedCall(thread * 250 + round, "a\(thread)", "b")]) { result in
                    if case .failure = result { failures.add(1, ordering: .relaxed) }
                    counter.signal()
                }
            }
        }
        #expect(counter.wait(for: 1000))
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(try store.allLogs("b", CallLogFilter(limit: 100)).count == 1000)
    }

    /// Reads queued right after a write, without waiting for it, see it.
    @Test(arguments: StoreLocation.allCases)
    func aReadQueuedAfterAWriteSeesIt(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        for index in 0 ..< 50 {
            var call = storedCall(index, status: .initiated)
            store.save([call]) { _ in }
            #expect(try store.fetch(call.sessionId) == call)
            call.status = .busy
            store.save([call]) { _ in }
            #expect(try store.logs("bob", CallLogFilter(limit: 1, missedOnly: true)).logs.first?.call == call)
            store.saveRevocation(uid: "u\(index)", revokedAt: Int64(index)) { _ in }
            #expect(try store.loadRevocations()["u\(index)"] == Int64(index))
        }
    }

    /// When the transaction cannot even begin (another connection holds the
    /// write lock past the busy timeout), every job of the batch, reads
    /// included, gets the error; the store works again once the change
    /// chain is recovered.
    @Test func aFailedTransactionFailsTheWholeBatch() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath)
        defer { store.close() }
        try store.saveAndWait([storedCall(0)])
        let blocker = try SQLiteDatabase(path: directory.databasePath)
        try blocker.executeScript("BEGIN IMMEDIATE")

        let gate = try WriterGate(store)
        let errors = Mutex<[StoreErrorCode?]>([])
        let counter = CompletionCounter()
        store.save([storedCall(1)]) { result in
            errors.withLock { $0.append(result.failureCode) }
            counter.signal()
        }
        store.call(sessionId: "session-0") { result in
            errors.withLock { $0.append(result.failureCode) }
            counter.signal()
        }
        store.save([storedCall(2)]) { result in
            errors.withLock { $0.append(result.failureCode) }
            counter.signal()
        }
        gate.release()
        #expect(counter.wait(for: 3))
        #expect(errors.withLock { $0 } == [.database, .database, .database])

        try blocker.executeScript("ROLLBACK")
        // The failed batch broke the change chain: nothing commits until it is recovered.
        #expect(throws: StoreError.self) { try store.saveAndWait([storedCall(4)]) }
        #expect(try waitForResult { store.recoverChain(completion: $0) }.get() == [])
        try store.saveAndWait([storedCall(3)])
        #expect(try store.fetch("session-1") == nil)
        #expect(try store.fetch("session-3") == storedCall(3))
    }

    /// From a completion (on the writer thread) the blocking methods neither
    /// deadlock nor run: they refuse, or (flush, close) return at once.
    @Test func blockingCallsFromACompletionDoNotDeadlock() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath)
        let codes = Mutex<[StoreErrorCode?]>([])
        let result = try waitForResult { completion in
            store.save([storedCall(1)]) { result in
                store.flush()
                let load = Result { () throws(StoreError) in try store.loadRevocations() }
                let live = Result { () throws(StoreError) in try store.loadLiveCalls() }
                codes.withLock { $0 = [load.failureCode, live.failureCode] }
                store.close()
                completion(result)
            }
        }
        #expect(throws: Never.self) { try result.get() }
        #expect(codes.withLock { $0 } == [.reentrant, .reentrant])
        store.close()
        let refused = try waitForResult { store.save([storedCall(2)], completion: $0) }
        #expect(refused.failureCode == .closed)
    }
}

extension Result where Failure == StoreError {
    /// The error's code, nil on success.
    var failureCode: StoreErrorCode? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
