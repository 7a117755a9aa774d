import SignalProtocol
@testable import SignalServer
import Testing
import TestSupport

/// Call history queries: every filter and combination, keyset pagination
/// (also while calls are added), and invalid queries.
@Suite(.blocking) struct CallStoreQueryTests {
    /// 90 calls between five users with every type and status, in save order.
    private static let calls: [Call] = (0 ..< 90).map { index in
        let users = ["alice", "bob", "carol", "dave", "erin"]
        let initiator = users[index % 3 == 0 ? 0 : (index / 3) % 5]
        var receiver = users[(index * 7 + 1) % 5]
        if receiver == initiator { receiver = users[(users.firstIndex(of: initiator)! + 1) % 5] }
        let statuses = CallStatus.allCases
        return storedCall(index, initiator, receiver, type: index % 4 == 1 ? .video : .audio,
                          status: statuses[(index / 2) % statuses.count])
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

    /// Runs `body` with a store at `location` holding ``calls``.
    private func withStore(_ location: StoreLocation = .file, _ body: (CallStore) throws -> Void) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        try opened.store.saveAndWait(Self.calls)
        try body(opened.store)
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
                            queries.append(CallLogFilter(limit: 4, callType: callType, status: status,
                                                        missedOnly: missedOnly, direction: direction, with: peer))
                        }
                    }
                }
            }
        }
        return queries
    }

    @Test(arguments: StoreLocation.allCases)
    func everyFilterAndCombinationMatchesAcrossPages(_ location: StoreLocation) throws {
        try withStore(location) { store in
            let queries = Self.everyCombination
            #expect(queries.count == 3 * 8 * 2 * 3 * 4)
            for query in queries {
                let logs = try store.allLogs("alice", query)
                #expect(logs == Self.expected("alice", query), "\(query)")
            }
        }
    }

    @Test func eachFilterAloneOnEveryUser() throws {
        try withStore { store in
            for uid in ["alice", "bob", "carol", "dave", "erin", "nobody"] {
                let queries = [CallLogFilter(limit: 100), CallLogFilter(limit: 100, callType: .video),
                               CallLogFilter(limit: 100, status: .rejected), CallLogFilter(limit: 100, missedOnly: true),
                               CallLogFilter(limit: 100, direction: .incoming), CallLogFilter(limit: 100, with: "alice")]
                for query in queries {
                    let page = try store.logs(uid, query)
                    #expect(page.logs == Self.expected(uid, query), "\(uid) \(query)")
                    #expect(page.next == nil)
                }
            }
        }
    }

    @Test func pagesWalkTheWholeHistoryNewestFirst() throws {
        try withStore { store in
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

    /// Keyset pagination: calls saved or updated between page fetches neither
    /// repeat nor skip any of the calls present at the start.
    @Test(arguments: StoreLocation.allCases)
    func paginationStaysConsistentWhileCallsArrive(_ location: StoreLocation) throws {
        try withStore(location) { store in
            let original = Self.expected("alice", CallLogFilter(limit: 100)).map(\.call.sessionId)
            var query = CallLogFilter(limit: 5)
            var seen: [String] = []
            var added = 1000
            while true {
                let page = try store.logs("alice", query)
                seen += page.logs.map(\.call.sessionId)
                // New calls (newer than all) and a status change of a call already shown.
                try store.saveAndWait([storedCall(added, "alice", "bob"), storedCall(added + 1, "carol", "alice")])
                if let shown = page.logs.first?.call {
                    var changed = shown
                    changed.metadata = .object([("seen", .bool(true))])
                    try store.saveAndWait([changed])
                }
                added += 2
                guard let next = page.next else { break }
                query.cursor = next
            }
            #expect(seen == original)
            #expect(Set(seen).count == seen.count)
            let now = try store.allLogs("alice", CallLogFilter(limit: 100)).map(\.call.sessionId)
            #expect(now.count == original.count + (added - 1000))
            #expect(Array(now.suffix(original.count)) == original)
        }
    }

    @Test(arguments: StoreLocation.allCases)
    func invalidCursorsAndLimitsAreRefused(_ location: StoreLocation) throws {
        try withStore(location) { store in
            let issued = try #require(try store.logs("alice", CallLogFilter(limit: 2)).next)
            for cursor in ["", "garbage", issued + "x", "AAAAAAAAAAA", String(issued.reversed()) + "+"] {
                let result = try waitForResult { store.callLogs(for: "alice", query: CallLogFilter(cursor: cursor), completion: $0) }
                let error = try #require(throws: StoreError.self) { try result.get() }
                #expect(error.code == .badCursor, "\(cursor)")
                #expect(throws: StoreError.self) { try CallLogFilter(cursor: cursor).seqBound() }
            }
            for limit in [0, -1, 101, Int.max] {
                let result = try waitForResult { store.callLogs(for: "alice", query: CallLogFilter(limit: limit), completion: $0) }
                let error = try #require(throws: StoreError.self) { try result.get() }
                #expect(error.code == .badQuery, "\(limit)")
            }
            _ = try CallLogFilter(limit: 100, cursor: issued).seqBound()
            // A cursor from one user's history is only a position: on another it resumes at the same seq.
            #expect(throws: Never.self) { try store.logs("bob", CallLogFilter(cursor: issued)) }
        }
    }

    @Test(arguments: StoreLocation.allCases)
    func anEmptyHistoryHasOneEmptyPage(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        #expect(try store.logs("alice") == CallLogPage(logs: [], next: nil))
    }
}
