import SignalProtocol
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

/// SQLite's own: a failing change or commit breaks the change chain until
/// it is recovered, and the live calls a start reads back (reading calls
/// and histories is ``CallBackendTests``', on every backend).
@Suite(.blocking) struct CallStoreCallTests {
    /// A failing job in a batch rolls back alone: the jobs before it, in the
    /// same transaction, commit, and a read after it sees the writes before
    /// it but nothing of it; a multi-call change that fails saves none. The
    /// changes after it fail without running (they may build on it) until
    /// the chain is recovered; other jobs run.
    @Test(arguments: StoreLocation.allCases)
    func aFailingChangeBreaksTheChainNotTheBatch(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        try store.saveAndWait([storedCall(1)])
        var conflicting = storedCall(1)
        conflicting.initiator = "eve"
        let gate = try WriterGate(store)
        let batchesBefore = store.batchCount
        let first = Mutex<Result<Void, StoreError>?>(nil), middle = Mutex<Result<Void, StoreError>?>(nil)
        let revoked = Mutex<Result<Void, StoreError>?>(nil)
        let counter = CompletionCounter()
        store.save([storedCall(2)]) { result in
            first.withLock { $0 = result }; counter.signal()
        }
        store.save([storedCall(3), conflicting]) { result in
            middle.withLock { $0 = result }; counter.signal()
        }
        let seen = Mutex<[String]>([])
        store.callLogs(for: "alice", query: CallLogFilter()) { result in
            seen.withLock { $0 = (try? result.get())?.logs.map(\.call.sessionId) ?? ["failed"] }
            counter.signal()
        }
        let badCursor = Mutex<StoreErrorCode?>(nil)
        store.callLogs(for: "alice", query: CallLogFilter(cursor: "bad")) { result in
            if case .failure(let error) = result { badCursor.withLock { $0 = error.code } }
            counter.signal()
        }
        store.saveRevocation(uid: "alice", revokedAt: 5) { result in
            revoked.withLock { $0 = result }; counter.signal()
        }
        let last = try waitForResult { completion in
            store.save([storedCall(4)], completion: completion)
            gate.release()
        }
        #expect(counter.wait(for: 5))
        #expect(store.batchCount - batchesBefore == 1)
        #expect(seen.withLock { $0 } == ["session-2", "session-1"])
        #expect(badCursor.withLock { $0 } == .badCursor)
        #expect(throws: Never.self) { try first.withLock { $0 }?.get() }
        #expect(middle.withLock { $0 }?.failureCode == .callConflict)
        #expect(throws: Never.self) { try revoked.withLock { $0 }?.get() }
        #expect(last.failureCode == .chainBroken)
        #expect(try store.fetch("session-2") != nil)
        #expect(try store.fetch("session-3") == nil)
        #expect(try store.fetch("session-4") == nil)
        #expect(try store.fetch("session-1") == storedCall(1))
        #expect(try store.loadRevocations() == ["alice": 5])

        #expect(
            try waitForResult { store.save([storedCall(5)], completion: $0) }.failureCode == .chainBroken,
            "the next batch's changes fail too")
        let live = try waitForResult { store.recoverChain(completion: $0) }.get()
        #expect(live.isEmpty)
        try store.saveAndWait([storedCall(6)])
        #expect(try store.fetch("session-6") != nil)
    }

    /// A transaction that fails as a whole (here at COMMIT, through the
    /// fault hook) fails every job of its batch and breaks the chain.
    @Test(arguments: StoreLocation.allCases)
    func aFailedCommitBreaksTheChainUntilRecovered(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        let ringing = storedCall(1, status: .initiated)
        try store.saveAndWait([ringing])
        store.setFaultHook { $0 == .commit ? StoreError(.database, "SQLITE_IOERR: injected") : nil }
        #expect(try waitForResult { store.save([storedCall(2)], completion: $0) }.failureCode == .database)
        store.setFaultHook(nil)
        #expect(try waitForResult { store.save([storedCall(3)], completion: $0) }.failureCode == .chainBroken)
        // A commit of nothing that follows the changes (a relayed signal) fails with them; one that does not, runs.
        #expect(
            try waitForResult { store.commit([], followsEarlierChanges: true, completion: $0) }.failureCode
                == .chainBroken)
        #expect(throws: Never.self) { try waitForResult { store.commit([], completion: $0) }.get() }
        #expect(try waitForResult { store.recoverChain(completion: $0) }.get() == [ringing])
        #expect(throws: Never.self) {
            try waitForResult { store.commit([], followsEarlierChanges: true, completion: $0) }.get()
        }
        try store.saveAndWait([storedCall(4)])
        #expect(
            try store.fetch("session-2") == nil && store.fetch("session-3") == nil && store.fetch("session-4") != nil)
    }

    @Test func loadLiveCallsReadsTheLiveCallsOldestFirst() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ringing = storedCall(1, "alice", "bob", status: .initiated)
        let ongoing = storedCall(2, "carol", "dave", type: .video, status: .ongoing)
        let terminal = CallStatus.allCases.filter(\.isTerminal).enumerated().map { offset, status in
            storedCall(10 + offset, "erin", "frank", status: status)
        }
        let store = try CallStore(path: directory.databasePath)
        try store.saveAndWait([ringing] + terminal + [ongoing])
        #expect(try store.loadLiveCalls() == [ringing, ongoing])
        store.close()
        let reopened = try CallStore(path: directory.databasePath)
        defer { reopened.close() }
        #expect(try reopened.loadLiveCalls() == [ringing, ongoing])
    }
}
