import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// Call history queries on every backend: every filter and combination,
/// keyset pagination in save order (equal times, calls arriving and
/// changing between pages), and invalid queries.
@Suite(.blocking) struct CallStoreQueryTests {
    /// 90 calls between five users with every type and status, saved at
    /// positions 1 to 90.
    private static let calls: [Call] = (0 ..< 90).map { index in
        let users = ["alice", "bob", "carol", "dave", "erin"]
        let initiator = users[index % 3 == 0 ? 0 : (index / 3) % 5]
        var receiver = users[(index * 7 + 1) % 5]
        if receiver == initiator { receiver = users[(users.firstIndex(of: initiator)! + 1) % 5] }
        let statuses = CallStatus.allCases
        var call = storedCall(
            index, initiator, receiver, type: index % 4 == 1 ? .video : .audio,
            status: statuses[(index / 2) % statuses.count])
        call.seq = Int64(index + 1)
        return call
    }

    /// What the history of `uid` for `query` must be: the matching calls, newest first.
    private static func expected(_ uid: String, _ query: CallLogFilter) -> [CallLog] {
        calls.reversed().filter { $0.isParty(uid) }.map { CallLog(call: $0, for: uid) }.filter { log in
            (query.callType == nil || log.call.callType == query.callType)
                && (query.status == nil || log.call.status == query.status)
                && (!query.missedOnly || log.missed)
                && (query.direction == nil || log.direction == query.direction)
                && (query.with == nil || log.call.otherParty(of: uid) == query.with)
        }
    }

    /// Runs `body` with a store of `backend` holding `calls`.
    private func withStore(
        _ backend: StoreBackend, _ calls: [Call] = calls, _ body: (BackendStore) throws -> Void
    ) throws {
        let store = try BackendStore(backend)
        defer { store.close() }
        try store.save(calls)
        try body(store)
    }

    @Test func datasetCoversEveryFilterValue() {
        let alice = Self.expected("alice", CallLogFilter(limit: 100))
        #expect(Set(alice.map(\.call.status)) == Set(CallStatus.allCases))
        #expect(Set(alice.map(\.call.callType)) == Set(CallType.allCases))
        #expect(Set(alice.map(\.direction)) == Set(CallDirection.allCases))
        #expect(alice.contains { $0.missed })
        #expect(Set(alice.map { $0.call.otherParty(of: "alice") }).count == 4)
    }

    /// Every combination of filter values (including none), with a small page size.
    private static var everyCombination: [CallLogFilter] {
        var queries: [CallLogFilter] = []
        let callTypes: [CallType?] = [nil] + CallType.allCases
        let statuses: [CallStatus?] = [nil] + CallStatus.allCases
        let directions: [CallDirection?] = [nil] + CallDirection.allCases
        let peers: [String?] = [nil, "bob", "erin", "nobody"]
        for callType in callTypes {
            for status in statuses {
                for missedOnly in [false, true] {
                    for direction in directions {
                        for peer in peers {
                            queries.append(
                                CallLogFilter(
                                    limit: 4, callType: callType, status: status,
                                    missedOnly: missedOnly, direction: direction, with: peer))
                        }
                    }
                }
            }
        }
        return queries
    }

    @Test(arguments: StoreBackend.allCases)
    func everyFilterAndCombinationMatchesAcrossPages(_ backend: StoreBackend) throws {
        try withStore(backend) { store in
            let queries = Self.everyCombination
            #expect(queries.count == 3 * 8 * 2 * 3 * 4)
            for query in queries {
                let logs = try store.allLogs("alice", query)
                #expect(logs == Self.expected("alice", query), "\(query)")
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func eachFilterAloneOnEveryUser(_ backend: StoreBackend) throws {
        try withStore(backend) { store in
            for uid in ["alice", "bob", "carol", "dave", "erin", "nobody"] {
                let queries = [
                    CallLogFilter(limit: 100), CallLogFilter(limit: 100, callType: .video),
                    CallLogFilter(limit: 100, status: .rejected), CallLogFilter(limit: 100, missedOnly: true),
                    CallLogFilter(limit: 100, direction: .incoming), CallLogFilter(limit: 100, with: "alice"),
                ]
                for query in queries {
                    let page = try store.logs(uid, query)
                    #expect(page.logs == Self.expected(uid, query), "\(uid) \(query)")
                    #expect(page.next == nil)
                }
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func pagesWalkTheWholeHistoryNewestFirst(_ backend: StoreBackend) throws {
        try withStore(backend) { store in
            let all = Self.expected("alice", CallLogFilter(limit: 100))
            #expect(all.count > 30)
            for limit in [1, 2, 7, 30, all.count, 100] {
                var query = CallLogFilter(limit: limit)
                var pages: [[CallLog]] = []
                while true {
                    let page = try store.logs("alice", query)
                    pages.append(page.logs)
                    guard let next = page.next else { break }
                    #expect(page.logs.count == limit)
                    #expect(
                        next == CallLogCursor.encode(try #require(page.logs.last).call.seq),
                        "the cursor is the last entry's seq")
                    query.cursor = next
                }
                #expect(pages.flatMap { $0 } == all, "limit \(limit)")
                // The last page is never empty: `next` is nil exactly when nothing follows.
                #expect(pages.count == (all.count + limit - 1) / limit, "limit \(limit)")
            }
            let first = try store.logs("alice")
            #expect(first.logs.count == CallLogFilter.defaultLimit)
            #expect(first.next != nil)
        }
    }

    /// Pages follow save order, not call times: calls with one start time,
    /// and one that started earlier but was saved later, split at page
    /// boundaries without a repeat or a gap.
    @Test(arguments: StoreBackend.allCases)
    func pagesBreakBetweenEqualTimesBySaveOrder(_ backend: StoreBackend) throws {
        let calls = (0 ..< 9).map { index in
            var call = storedCall(index, index % 2 == 0 ? "alice" : "bob", index % 2 == 0 ? "bob" : "alice")
            call.initiatedAt = index == 8 ? 1 : 1_700_000_000_000
            call.seq = Int64(10 + index)
            return call
        }
        try withStore(backend, calls) { store in
            let newestFirst = calls.reversed().map { CallLog(call: $0, for: "alice") }
            for limit in [1, 2, 3, 4] {
                let logs = try store.allLogs("alice", CallLogFilter(limit: limit))
                #expect(logs == newestFirst, "limit \(limit)")
            }
        }
    }

    /// Keyset pagination: calls saved or changed between page fetches
    /// neither repeat nor skip any of the calls present at the start; a
    /// change keeps a call where it was first saved.
    @Test(arguments: StoreBackend.allCases)
    func paginationStaysConsistentWhileCallsArrive(_ backend: StoreBackend) throws {
        try withStore(backend) { store in
            let original = Self.expected("alice", CallLogFilter(limit: 100)).map(\.call.sessionId)
            var query = CallLogFilter(limit: 5)
            var seen: [String] = []
            var position: Int64 = 1000
            var added = 0
            while true {
                let page = try store.logs("alice", query)
                seen += page.logs.map(\.call.sessionId)
                // New calls (newer than all) and a change of a call already shown.
                for (initiator, receiver) in [("alice", "bob"), ("carol", "alice")] {
                    position += 1
                    var call = storedCall(Int(position), initiator, receiver)
                    call.seq = position
                    try store.save([call])
                    added += 1
                }
                if var changed = page.logs.first?.call {
                    position += 1
                    changed.metadata = .object([("seen", .bool(true))])
                    changed.seq = position
                    try store.save([changed])
                }
                guard let next = page.next else { break }
                query.cursor = next
            }
            #expect(seen == original)
            #expect(Set(seen).count == seen.count)
            let now = try store.allLogs("alice", CallLogFilter(limit: 100)).map(\.call.sessionId)
            #expect(now.count == original.count + added)
            #expect(Array(now.suffix(original.count)) == original)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func invalidCursorsAndLimitsAreRefused(_ backend: StoreBackend) throws {
        try withStore(backend) { store in
            let issued = try #require(try store.logs("alice", CallLogFilter(limit: 2)).next)
            for cursor in ["", "garbage", issued + "x", "AAAAAAAAAAA", String(issued.reversed()) + "+"] {
                let error = try #require(throws: StoreError.self) {
                    try store.logs("alice", CallLogFilter(cursor: cursor))
                }
                #expect(error == StoreError(.badCursor, "cursor is not one the server issued"), "\(cursor)")
                #expect(throws: StoreError.self) { try CallLogFilter(cursor: cursor).seqBound() }
            }
            for limit in [0, -1, 101, Int.max] {
                let error = try #require(throws: StoreError.self) {
                    try store.logs("alice", CallLogFilter(limit: limit))
                }
                #expect(error == StoreError(.badQuery, "limit must be 1 to 100, not \(limit)"))
            }
            // A cursor from one user's history is only a position: on another it resumes at the same seq.
            let bound = try CallLogFilter(limit: 100, cursor: issued).seqBound()
            let bobs = try store.logs("bob", CallLogFilter(limit: 100, cursor: issued))
            #expect(bobs.logs == Self.expected("bob", CallLogFilter(limit: 100)).filter { $0.call.seq < bound })
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func anEmptyHistoryHasOneEmptyPage(_ backend: StoreBackend) throws {
        try withStore(backend, []) { store in
            let page = try store.logs("alice")
            #expect(page == CallLogPage(logs: [], next: nil))
        }
    }
}
