import SignalProtocol
@testable import SignalServer
import Testing

/// Call history pages from PostgreSQL: every filter and combination across
/// pages, keyset pagination in save order (equal times, calls arriving and
/// changing between pages), and the invalid queries SQLite refuses.
@Suite(.serialized) struct PostgresCallLogsTests {
    /// 90 calls between five users with every type and status, saved at
    /// positions 1 to 90 (CallStoreQueryTests' data set).
    private static let calls: [Call] = (0 ..< 90).map { index in
        let users = ["alice", "bob", "carol", "dave", "erin"]
        let initiator = users[index % 3 == 0 ? 0 : (index / 3) % 5]
        var receiver = users[(index * 7 + 1) % 5]
        if receiver == initiator { receiver = users[((users.firstIndex(of: initiator) ?? 0) + 1) % 5] }
        let statuses = CallStatus.allCases
        var call = storedCall(index, initiator, receiver, type: index % 4 == 1 ? .video : .audio,
                              status: statuses[(index / 2) % statuses.count])
        call.seq = Int64(index + 1)
        return call
    }

    /// What the history of `uid` for `query` must be: the matching calls, newest first.
    private static func expected(_ uid: String, _ query: CallLogFilter, in calls: [Call] = calls) -> [CallLog] {
        calls.reversed().filter { $0.isParty(uid) }.map { CallLog(call: $0, for: uid) }.filter { log in
            (query.callType == nil || log.call.callType == query.callType)
                && (query.status == nil || log.call.status == query.status)
                && (!query.missedOnly || log.missed)
                && (query.direction == nil || log.direction == query.direction)
                && (query.with == nil || log.call.otherParty(of: uid) == query.with)
        }
    }

    /// A migrated database on a new server holding `calls`; `body` gets its connection.
    private func withDatabase(_ calls: [Call] = calls, _ body: (PostgresConnection) throws -> Void) throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try PostgresConnection(url: server.url)
        try PostgresSchema.migrate(connection)
        for call in calls { try connection.save(call) }
        try body(connection)
    }

    @Test func everyFilterAndCombinationMatchesAcrossPages() throws {
        try withDatabase { connection in
            let callTypes: [CallType?] = [nil] + CallType.allCases
            let statuses: [CallStatus?] = [nil] + CallStatus.allCases
            let directions: [CallDirection?] = [nil] + CallDirection.allCases
            var queries = 0
            for callType in callTypes {
                for status in statuses {
                    for missedOnly in [false, true] {
                        for direction in directions {
                            for peer in [nil, "bob", "erin", "nobody"] {
                                let query = CallLogFilter(limit: 4, callType: callType, status: status,
                                                          missedOnly: missedOnly, direction: direction, with: peer)
                                let logs = try connection.allLogs("alice", query)
                                #expect(logs == Self.expected("alice", query), "\(query)")
                                queries += 1
                            }
                        }
                    }
                }
            }
            #expect(queries == 3 * 8 * 2 * 3 * 4)
            for uid in ["bob", "carol", "dave", "erin", "nobody"] {
                let query = CallLogFilter(limit: 100, missedOnly: true)
                let page = try connection.callLogs(for: uid, query: query)
                #expect(page == CallLogPage(logs: Self.expected(uid, query), next: nil), "\(uid)")
            }
        }
    }

    @Test func pagesWalkTheWholeHistoryNewestFirst() throws {
        try withDatabase { connection in
            let all = Self.expected("alice", CallLogFilter(limit: 100))
            #expect(all.count > 30)
            for limit in [1, 2, 7, 30, all.count, 100] {
                var query = CallLogFilter(limit: limit)
                var pages: [[CallLog]] = []
                while true {
                    let page = try connection.callLogs(for: "alice", query: query)
                    pages.append(page.logs)
                    guard let next = page.next else { break }
                    #expect(page.logs.count == limit)
                    #expect(next == CallLogCursor.encode(try #require(page.logs.last).call.seq),
                            "the cursor is the last entry's seq, as SQLite's")
                    query.cursor = next
                }
                #expect(pages.flatMap { $0 } == all, "limit \(limit)")
                // The last page is never empty: `next` is nil exactly when nothing follows.
                #expect(pages.count == (all.count + limit - 1) / limit, "limit \(limit)")
            }
            let first = try connection.callLogs(for: "alice", query: CallLogFilter())
            #expect(first.logs.count == CallLogFilter.defaultLimit && first.next != nil)
        }
    }

    /// Pages follow save order, not call times: calls with one start time,
    /// and one that started earlier but was saved later, split at page
    /// boundaries without a repeat or a gap.
    @Test func pagesBreakBetweenEqualTimesBySaveOrder() throws {
        let calls = (0 ..< 9).map { index in
            var call = storedCall(index, index % 2 == 0 ? "alice" : "bob", index % 2 == 0 ? "bob" : "alice")
            call.initiatedAt = index == 8 ? 1 : 1_700_000_000_000
            call.seq = Int64(10 + index)
            return call
        }
        try withDatabase(calls) { connection in
            let newestFirst = calls.reversed().map { CallLog(call: $0, for: "alice") }
            for limit in [1, 2, 3, 4] {
                let logs = try connection.allLogs("alice", CallLogFilter(limit: limit))
                #expect(logs == newestFirst, "limit \(limit)")
            }
        }
    }

    /// Keyset pagination: calls saved or changed between page fetches
    /// neither repeat nor skip any of the calls present at the start; a
    /// change keeps a call where it was first saved.
    @Test func paginationStaysConsistentWhileCallsArrive() throws {
        try withDatabase { connection in
            let original = Self.expected("alice", CallLogFilter(limit: 100)).map(\.call.sessionId)
            var query = CallLogFilter(limit: 5)
            var seen: [String] = []
            var position: Int64 = 1000
            while true {
                let page = try connection.callLogs(for: "alice", query: query)
                seen += page.logs.map(\.call.sessionId)
                for (initiator, receiver) in [("alice", "bob"), ("carol", "alice")] {
                    position += 1
                    var added = storedCall(Int(position), initiator, receiver)
                    added.seq = position
                    try connection.save(added)
                }
                if var changed = page.logs.first?.call {
                    position += 1
                    changed.metadata = .object([("seen", .bool(true))])
                    changed.seq = position
                    try connection.save(changed)
                }
                guard let next = page.next else { break }
                query.cursor = next
            }
            #expect(seen == original)
            let now = try connection.allLogs("alice", CallLogFilter(limit: 100)).map(\.call.sessionId)
            #expect(Array(now.suffix(original.count)) == original)
            #expect(now.count > original.count)
        }
    }

    @Test func invalidCursorsAndLimitsAreRefusedAndAnEmptyHistoryHasOneEmptyPage() throws {
        try withDatabase { connection in
            let issued = try #require(try connection.callLogs(for: "alice", query: CallLogFilter(limit: 2)).next)
            for cursor in ["", "garbage", issued + "x", "AAAAAAAAAAA", String(issued.reversed()) + "+"] {
                let error = try #require(throws: StoreError.self) {
                    try connection.callLogs(for: "alice", query: CallLogFilter(cursor: cursor))
                }
                #expect(error == StoreError(.badCursor, "cursor is not one the server issued"), "\(cursor)")
            }
            for limit in [0, -1, 101, Int.max] {
                let error = try #require(throws: StoreError.self) {
                    try connection.callLogs(for: "alice", query: CallLogFilter(limit: limit))
                }
                #expect(error == StoreError(.badQuery, "limit must be 1 to 100, not \(limit)"))
            }
            // A cursor is only a position: on another user's history it resumes at the same seq.
            let bound = try CallLogCursor.decode(issued)
            let bobs = try connection.callLogs(for: "bob", query: CallLogFilter(limit: 100, cursor: issued))
            #expect(bobs.logs == Self.expected("bob", CallLogFilter(limit: 100)).filter { $0.call.seq < bound })
            #expect(try connection.callLogs(for: "nobody", query: CallLogFilter()) == CallLogPage(logs: [], next: nil))
        }
    }
}

extension PostgresConnection {
    /// Every page of `uid`'s history for `query`, concatenated.
    func allLogs(_ uid: String, _ query: CallLogFilter) throws(StoreError) -> [CallLog] {
        var query = query
        var logs: [CallLog] = []
        while true {
            let page = try callLogs(for: uid, query: query)
            logs += page.logs
            guard let next = page.next else { return logs }
            query.cursor = next
        }
    }
}
