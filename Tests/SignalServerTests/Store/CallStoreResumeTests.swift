import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// The store's half of resume, on every backend: which calls of a user
/// changed after a position, read from the party indexes and the call the
/// user was in then.
@Suite(.blocking) struct CallStoreResumeTests {
    /// A store whose calls are saved as the machine saves them: each change
    /// with its position, a new call's seq being its first position.
    final class Ledger {
        private let backing: BackendStore
        private(set) var position: Int64 = 100

        init(_ backend: StoreBackend) throws {
            backing = try BackendStore(backend)
        }

        /// Saves `call` at the next position; returns it as saved.
        @discardableResult
        func save(_ call: Call) throws -> Call {
            position += 1
            var saved = call
            saved.seq = position
            try backing.save([saved])
            return saved
        }

        func call(_ id: String, _ from: String, _ to: String, _ status: CallStatus, endedBy: String? = nil) -> Call {
            Call(
                sessionId: id, callType: .audio, status: status, initiator: from, receiver: to, initiatedAt: 1_000,
                endedAt: status.isTerminal ? 2_000 : nil, endedBy: endedBy,
                endReason: status == .busy ? .busy : status == .ended ? .hangup : nil, timeoutMs: 30_000)
        }

        func changed(_ uid: String, after seq: Int64, limit: Int = 10) throws -> ChangedCalls {
            try backing.changedCalls(of: uid, after: seq, limit: limit)
        }

        func finish() { backing.close() }
    }

    /// Every store has an epoch, the same however often it is read, and a
    /// store made anew has another: positions of one are never taken for
    /// the other's.
    @Test(arguments: StoreBackend.allCases)
    func everyStoreHasAnEpochOfItsOwn(_ backend: StoreBackend) throws {
        let store = try BackendStore(backend), other = try BackendStore(backend)
        defer {
            store.close()
            other.close()
        }
        let epoch = try #require(try store.epoch())
        #expect(!epoch.isEmpty && epoch.utf8.count <= ClientFrame.maxEpochBytes)
        #expect(try store.epoch() == epoch)
        #expect(try other.epoch() != epoch)
    }

    @Test(arguments: StoreBackend.allCases)
    func theCallLiveAtThePositionAndTheCallsCreatedSinceOldestChangeFirst(_ backend: StoreBackend) throws {
        let l = try Ledger(backend)
        defer { l.finish() }
        try l.save(l.call("old", "bob", "alice", .ended, endedBy: "bob"))
        var live = try l.save(l.call("live", "alice", "bob", .initiated))
        live.status = .ongoing
        live = try l.save(live)
        // Called while in "live": busy at once, never live.
        let busy = try l.save(l.call("busy", "carol", "bob", .busy))
        let position = l.position
        let later = try l.save(l.call("later", "dave", "bob", .busy))
        live.status = .ended
        live = try l.save(live)

        let changed = try l.changed("bob", after: position)
        #expect(changed.calls == [later, live])
        #expect(!changed.exceeded)
        #expect(try l.changed("carol", after: position).calls.isEmpty, "carol's busy call did not change since")
        #expect(try l.changed("bob", after: busy.seq - 1).calls == [busy, later, live])
    }

    @Test(arguments: StoreBackend.allCases)
    func aLiveCallUnchangedSinceThePositionAndCallsThatEndedBeforeItAreLeftOut(_ backend: StoreBackend) throws {
        let l = try Ledger(backend)
        defer { l.finish() }
        try l.save(l.call("ended", "alice", "bob", .ended, endedBy: "alice"))
        let ringing = try l.save(l.call("ringing", "alice", "bob", .initiated))
        #expect(try l.changed("bob", after: l.position).calls.isEmpty)
        #expect(try l.changed("bob", after: ringing.seq - 1).calls == [ringing])
    }

    @Test(arguments: StoreBackend.allCases)
    func aCallDeclinedAsBusyByTheCalleeWasLiveAndCounts(_ backend: StoreBackend) throws {
        let l = try Ledger(backend)
        defer { l.finish() }
        let ringing = try l.save(l.call("c", "alice", "bob", .initiated))
        let position = l.position
        var declined = ringing
        declined.status = .busy
        declined.endReason = .busy
        declined.endedBy = "bob"
        declined = try l.save(declined)
        #expect(try l.changed("alice", after: position).calls == [declined])
    }

    @Test(arguments: StoreBackend.allCases)
    func moreThanTheLimitIsExceededAndAnswersNoCalls(_ backend: StoreBackend) throws {
        let l = try Ledger(backend)
        defer { l.finish() }
        let position = l.position
        for index in 0 ..< 4 { try l.save(l.call("c\(index)", "alice", "bob", .busy)) }
        #expect(try l.changed("bob", after: position, limit: 4).calls.count == 4)
        let over = try l.changed("bob", after: position, limit: 3)
        #expect(over.exceeded && over.calls.isEmpty)
        // Only busy calls within the limit before the position: the call bob
        // was in then cannot be told apart, so the store does not guess.
        #expect(try l.changed("bob", after: l.position, limit: 4).exceeded)
        #expect(try !l.changed("bob", after: l.position, limit: 5).exceeded)
    }

    @Test(arguments: StoreLocation.allCases)
    func positionsAreReservedABlockAtATimeAndAStartContinuesAboveThem(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        try opened.store.commitAndWait([], reservingSeq: 2_000)
        #expect(try opened.store.loadContinuity().lastSeq == 2_000)
        try opened.store.commitAndWait([], reservingSeq: 1_500)
        #expect(try opened.store.loadContinuity().lastSeq == 2_000, "the counter never goes back")
    }
}
