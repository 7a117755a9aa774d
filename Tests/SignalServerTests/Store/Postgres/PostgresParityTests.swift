import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// The same calls stored in SQLite (``StoreConnection``, in memory) and in
/// PostgreSQL read the same: every history page and its cursor for many
/// queries, the errors of invalid ones, the calls changed after every
/// position, and the live calls. A client, or a device resuming, cannot
/// tell which backend served it.
@Suite(.serialized, .blocking) struct PostgresParityTests {
    static let users = ["alice", "bob", "carol", "dave", "erin"]

    /// A deterministic history as the machine writes it: calls created
    /// (busy at once when a party is in a live call) and their live calls
    /// answered, declined, cancelled, timed out or hung up, each change at
    /// the next position; start times repeat, so only save order sorts.
    static let changes: [Call] = {
        var random = SplitMix64(seed: 18)
        var changes: [Call] = []
        var live: [Call] = []
        var position: Int64 = 0
        func save(_ call: Call) -> Call {
            position += 1
            var saved = call
            saved.seq = position
            changes.append(saved)
            return saved
        }
        for step in 0 ..< 400 {
            // Late steps end no call and answer one, so calls are ringing and
            // ongoing at the end.
            let late = step >= 360
            let next =
                !late
                ? live.isEmpty ? nil : random.next(live.count)
                : live.contains { $0.status == .ongoing } ? nil : live.firstIndex { $0.status == .initiated }
            if let next, random.next(3) != 0 {
                var call = live.remove(at: next)
                let now = call.initiatedAt + 1_000
                switch (call.status, late ? 0 : random.next(5)) {
                case (.initiated, 0):
                    call.status = .ongoing
                    call.acceptedAt = now
                    call.acceptedBy = "\(call.receiver)-phone"
                case (.initiated, 1):
                    (call.status, call.endReason, call.endedBy) = (.rejected, .rejected, call.receiver)
                case (.initiated, 2):
                    (call.status, call.endReason, call.endedBy) = (.cancelled, .cancelled, call.initiator)
                case (.initiated, 3): (call.status, call.endReason) = (.unanswered, .timeout)
                case (.initiated, _): (call.status, call.endReason, call.endedBy) = (.busy, .busy, call.receiver)
                default: (call.status, call.endReason, call.endedBy) = (.ended, .hangup, call.initiator)
                }
                if call.status.isTerminal { call.endedAt = now }
                let saved = save(call)
                if !saved.status.isTerminal { live.append(saved) }
                continue
            }
            let initiator = users[random.next(users.count)]
            let receiver = users.filter { $0 != initiator }[random.next(users.count - 1)]
            let busy = live.contains { $0.isParty(initiator) || $0.isParty(receiver) }
            let call = Call(
                sessionId: "call-\(step)", callType: random.next(3) == 0 ? .video : .audio,
                status: busy ? .busy : .initiated, initiator: initiator, receiver: receiver,
                initiatorDevice: "\(initiator)-laptop", initiatedAt: 1_700_000_000_000 + Int64(step / 4) * 1_000,
                endedAt: busy ? 1_700_000_000_000 : nil, endReason: busy ? .busy : nil, timeoutMs: 30_000,
                metadata: step % 5 == 0 ? .object([("step", .integer(Int64(step)))]) : nil)
            let saved = save(call)
            if !busy { live.append(saved) }
        }
        return changes
    }()

    /// Both backends holding ``changes``; `body` gets SQLite's connection, then PostgreSQL's.
    private func withBothBackends(_ body: (StoreConnection, PostgresConnection) throws -> Void) throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let postgres = try server.migratedConnection()
        let sqlite = try StoreConnection(path: CallStore.inMemoryPath, synchronousFull: false)
        for call in Self.changes {
            try sqlite.save(call)
            try postgres.save(call)
        }
        try body(sqlite, postgres)
    }

    @Test func theHistoryDataCoversEveryStatusUpdatesAndLiveCalls() {
        let final = Dictionary(Self.changes.map { ($0.sessionId, $0) }, uniquingKeysWith: { $1 })
        #expect(Set(final.values.map(\.status)) == Set(CallStatus.allCases))
        #expect(final.count < Self.changes.count, "some calls changed after they were created")
        #expect(final.values.contains { $0.status == .busy && $0.endedBy == nil })
        #expect(final.values.contains { $0.status == .busy && $0.endedBy != nil })
        #expect(Set(Self.changes.map(\.initiatedAt)).count < Self.changes.count / 2, "start times repeat")
    }

    @Test func historyPagesAndCursorsAreIdentical() throws {
        try withBothBackends { sqlite, postgres in
            let callTypes: [CallType?] = [nil] + CallType.allCases
            let statuses: [CallStatus?] = [nil] + CallStatus.allCases
            let directions: [CallDirection?] = [nil] + CallDirection.allCases
            var pages = 0
            for uid in ["alice", "bob", "nobody"] {
                for callType in callTypes {
                    for status in statuses {
                        for missedOnly in [false, true] {
                            for direction in directions {
                                for peer in [nil, "bob", "carol", "nobody"] {
                                    var query = CallLogFilter(
                                        limit: 6, callType: callType, status: status,
                                        missedOnly: missedOnly, direction: direction, with: peer)
                                    while true {
                                        let expected = try sqlite.callLogs(for: uid, query: query)
                                        #expect(
                                            try postgres.callLogs(for: uid, query: query) == expected, "\(uid) \(query)"
                                        )
                                        pages += 1
                                        guard let next = expected.next else { break }
                                        query.cursor = next
                                    }
                                }
                            }
                        }
                    }
                }
            }
            #expect(pages > 3 * 3 * 8 * 2 * 3 * 4)
            for limit in [1, 17, 100] {
                var query = CallLogFilter(limit: limit)
                repeat {
                    let expected = try sqlite.callLogs(for: "carol", query: query)
                    #expect(try postgres.callLogs(for: "carol", query: query) == expected, "limit \(limit)")
                    query.cursor = expected.next
                } while query.cursor != nil
            }
        }
    }

    @Test func invalidQueriesFailAlike() throws {
        try withBothBackends { sqlite, postgres in
            let issued = try #require(try sqlite.callLogs(for: "alice", query: CallLogFilter(limit: 3)).next)
            let queries =
                ["", "garbage", issued + "x", "AAAAAAAAAAA", String(issued.reversed()) + "+"].map {
                    CallLogFilter(cursor: $0)
                } + [0, -1, 101, Int.max].map { CallLogFilter(limit: $0) }
            for query in queries {
                let expected = try #require(throws: StoreError.self) { try sqlite.callLogs(for: "alice", query: query) }
                let error = try #require(throws: StoreError.self) { try postgres.callLogs(for: "alice", query: query) }
                #expect(error == expected, "\(query)")
            }
            // The largest cursor there is, and one past every call, page alike too.
            for seq in [Int64.max, Int64(Self.changes.count + 1), 1] {
                let query = CallLogFilter(cursor: CallLogCursor.encode(seq))
                #expect(
                    try postgres.callLogs(for: "alice", query: query) == sqlite.callLogs(for: "alice", query: query))
            }
        }
    }

    @Test func changedCallsAfterEveryPositionAreIdentical() throws {
        try withBothBackends { sqlite, postgres in
            var exceeded = 0, found = 0
            for uid in Self.users + ["nobody"] {
                for seq in 0 ... Int64(Self.changes.count + 1) {
                    for limit in [1, 3, 10] {
                        let expected = try sqlite.changedCalls(of: uid, after: seq, limit: limit)
                        let changed = try postgres.changedCalls(of: uid, after: seq, limit: limit)
                        #expect(
                            changed.calls == expected.calls && changed.exceeded == expected.exceeded,
                            "\(uid) after \(seq), limit \(limit)")
                        exceeded += expected.exceeded ? 1 : 0
                        found += expected.calls.isEmpty ? 0 : 1
                    }
                }
            }
            #expect(exceeded > 0 && found > 0, "both kinds of answer were compared")
        }
    }

    @Test func liveCallsOfAnyUsersAreSQLitesLiveCallsOfThem() throws {
        try withBothBackends { sqlite, postgres in
            let live = try sqlite.liveCalls()
            #expect(!live.isEmpty)
            for uids in [Self.users, ["alice"], ["bob", "erin"], ["nobody"], []] {
                #expect(try postgres.liveCalls(ofAny: uids) == live.filter { $0.isParty(uids) }, "\(uids)")
            }
        }
    }
}

private extension Call {
    func isParty(_ uids: [String]) -> Bool { uids.contains(initiator) || uids.contains(receiver) }
}

/// A small seeded generator (SplitMix64), so the history is the same on every run.
private struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A number in `0 ..< bound`.
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
