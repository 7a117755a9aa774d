import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// Call history over the WebSocket and the REST API: order, direction,
    /// missed flags, filters, keyset pagination under concurrent inserts.
    @Suite("SignalingIntegration: call logs", .blocking)
    struct CallLogTests {
        /// One call of alice's history as the test expects to see it.
        struct Entry {
            let sessionId: String, callType: String, status: String, direction: String, peer: String, missed: Bool
        }

        /// Alice's history (8 calls, oldest first) with bob, carol and, for a busy bob, dave.
        static func buildHistory(_ h: Harness) throws -> (entries: [Entry], devices: [String: Device]) {
            let a = try h.device("alice", "a1"), b = try h.device("bob", "b1")
            let c = try h.device("carol", "c1"), d = try h.device("dave", "d1")
            var entries: [Entry] = []
            func add(_ call: Snapshot, _ peer: String, _ missed: Bool) {
                entries.append(
                    Entry(
                        sessionId: call.sessionId, callType: call.callType.rawValue, status: call.status.rawValue,
                        direction: call.initiator == "alice" ? "outgoing" : "incoming", peer: peer, missed: missed))
            }
            let s1 = try a.initiate(to: "bob", "audio").call().sessionId
            _ = try b.accept(s1).call()
            add(try a.end(s1).call(), "bob", false)
            let s2 = try b.initiate(to: "alice", "video", timeout: 1).call().sessionId
            add(try a.waitForEvent(s2, .unanswered), "bob", true)
            let s3 = try c.initiate(to: "alice", "audio").call().sessionId
            add(try c.cancel(s3).call(), "carol", true)
            let s4 = try b.initiate(to: "alice", "audio").call().sessionId
            add(try a.reject(s4).call(), "bob", false)
            let s5 = try c.initiate(to: "alice", "video").call().sessionId
            add(try a.reject(s5, status: "busy").call(), "carol", true)
            let s6 = try a.initiate(to: "carol", "video").call().sessionId
            add(try a.cancel(s6).call(), "carol", false)
            let daveCall = try d.initiate(to: "bob", "audio").call().sessionId
            _ = try b.accept(daveCall).call()
            add(try a.initiate(to: "bob", "audio").call(), "bob", false)
            _ = try d.end(daveCall).call()
            let s8 = try b.initiate(to: "alice", "video").call().sessionId
            _ = try a.accept(s8).call()
            add(try b.end(s8).call(), "bob", false)
            #expect(
                entries.map(\.status) == [
                    "ended", "unanswered", "cancelled", "rejected", "busy", "cancelled", "busy", "ended",
                ])
            return (entries, ["alice": a, "bob": b, "carol": c, "dave": d])
        }

        @Test("order, direction, missed, filters; WebSocket and REST agree; users see only their calls")
        func historyAndFilters() throws {
            let h = try Harness()
            defer { h.finish() }
            let (entries, devices) = try Self.buildHistory(h)
            let a = try #require(devices["alice"])
            let newestFirst = Array(entries.reversed())

            let all = try a.logs()
            #expect(all.ok && all.data?["next"] == .null)
            let logs = logEntries(all.data)
            #expect(logs.map { $0["sessionId"]?.stringValue ?? "" } == newestFirst.map(\.sessionId))
            for (log, expected) in zip(logs, newestFirst) {
                #expect(log["direction"] == .string(expected.direction), "\(log.serialized)")
                #expect(log["missed"] == .bool(expected.missed), "\(log.serialized)")
                #expect(log["status"] == .string(expected.status) && log["callType"] == .string(expected.callType))
                // The entry is the stored call plus direction and missed.
                let stored = try #require(try h.rest("GET", "/v1/calls/\(expected.sessionId)").json?.objectMembers)
                #expect(Array(try #require(log.objectMembers).prefix(stored.count)).map(\.key) == stored.map(\.key))
                #expect(JSONValue.object(Array(log.objectMembers!.prefix(stored.count))) == .object(stored))
            }
            #expect(try h.rest("GET", "/v1/users/alice/calls").json == all.data, "REST and WebSocket disagree")

            let filters: [([(String, String)], (Entry) -> Bool)] = [
                ([("callType", "video")], { $0.callType == "video" }),
                ([("callStatus", "cancelled")], { $0.status == "cancelled" }),
                ([("callStatus", "busy")], { $0.status == "busy" }),
                ([("callStatus", "missed")], { $0.missed }),
                ([("direction", "outgoing")], { $0.direction == "outgoing" }),
                ([("direction", "incoming")], { $0.direction == "incoming" }),
                ([("with", "carol")], { $0.peer == "carol" }),
                ([("with", "bob"), ("direction", "incoming")], { $0.peer == "bob" && $0.direction == "incoming" }),
                ([("callStatus", "missed"), ("callType", "video")], { $0.missed && $0.callType == "video" }),
                ([("with", "erin")], { _ in false }),
            ]
            for (params, matches) in filters {
                let expected = newestFirst.filter(matches).map(\.sessionId)
                let reply = try a.logs(params)
                #expect(sessionIds(reply.data) == expected, "\(params): \(reply)")
                let query = params.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
                let rest = try h.rest("GET", "/v1/users/alice/calls?\(query)")
                #expect(rest.status == 200 && rest.json == reply.data, "REST \(query): \(rest)")
            }

            // Everyone sees only their own calls; bob missed the busy call from alice.
            let bobLogs = logEntries(try #require(devices["bob"]).logs().data)
            let bobIds = Set(bobLogs.compactMap { $0["sessionId"]?.stringValue })
            #expect(bobIds.isSuperset(of: newestFirst.filter { $0.peer == "bob" }.map(\.sessionId)))
            #expect(bobLogs.count == newestFirst.filter { $0.peer == "bob" }.count + 1, "plus dave's call")
            #expect(bobLogs.allSatisfy { [$0["initiator"]?["uid"], $0["receiver"]?["uid"]].contains(.string("bob")) })
            let busyFromAlice = try #require(bobLogs.first { $0["status"] == .string("busy") })
            #expect(busyFromAlice["direction"] == .string("incoming") && busyFromAlice["missed"] == .bool(true))
            let carolIds = sessionIds(try #require(devices["carol"]).logs().data)
            #expect(carolIds == newestFirst.filter { $0.peer == "carol" }.map(\.sessionId))
            #expect(sessionIds(try h.rest("GET", "/v1/users/dave/calls").json).count == 1)
            #expect(sessionIds(try h.rest("GET", "/v1/users/nobody/calls").json).isEmpty)

            // Limits and cursors.
            for limit in [0, 101] {
                let reply = try a.logs(limit: limit)
                #expect(reply.code == "ERR_VALIDATION" && reply.message.contains("limit"), "\(reply)")
            }
            #expect(sessionIds(try a.logs(limit: 100).data).count == entries.count)
            for cursor in ["!!!", "AAAAAAAAAAA", "c2VxOjQx", ""] {
                let reply = try a.logs([("cursor", cursor)])
                #expect(reply.code == "ERR_VALIDATION" && reply.message.contains("cursor"), "\(cursor): \(reply)")
            }
            let typeReply = try a.logs([("callStatus", "sideways")])
            #expect(typeReply.code == "ERR_VALIDATION" && typeReply.message.contains("callStatus"))
        }

        @Test("pagination with limit 2 while calls are being added: no duplicates, no gaps")
        func paginationUnderInserts() throws {
            let h = try Harness()
            defer { h.finish() }
            let (entries, devices) = try Self.buildHistory(h)
            let a = try #require(devices["alice"])
            let erin = try h.device("erin", "e1")
            #expect(sessionIds(try a.logs().data) == entries.reversed().map(\.sessionId))

            for useREST in [false, true] {
                // The calls that exist when the walk starts (the first walk adds some).
                let newestFirst = sessionIds(try a.logs(limit: 100).data)
                var seen: [String] = []
                var cursor: String?
                var pages = 0
                repeat {
                    let page: JSONValue?
                    if useREST {
                        let response = try h.rest(
                            "GET", "/v1/users/alice/calls?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
                        #expect(response.status == 200, "\(response)")
                        page = response.json
                    } else {
                        let reply = try a.logs(limit: 2, cursor.map { [("cursor", $0)] } ?? [])
                        #expect(reply.ok, "\(reply)")
                        page = reply.data
                    }
                    let ids = sessionIds(page)
                    #expect(ids.count <= 2)
                    seen += ids
                    cursor = page?["next"]?.stringValue
                    if cursor != nil { #expect(ids.count == 2) }
                    // A newer call lands between two page fetches.
                    let added = try erin.initiate(to: "alice").call().sessionId
                    _ = try erin.cancel(added).call()
                    pages += 1
                } while cursor != nil && pages < 20
                #expect(seen == newestFirst, "REST: \(useREST); pages gave \(seen.count) entries in \(pages) pages")
                #expect(pages == (newestFirst.count + 1) / 2)
            }
            // The new calls are there, on top.
            let top = try a.logs(limit: 3)
            #expect(logEntries(top.data).allSatisfy { $0["initiator"]?["uid"] == .string("erin") })
            #expect(top.data?["next"]?.stringValue != nil)
            // Past 30 calls, the default page is 30 long and has a next page.
            while sessionIds(try a.logs(limit: 100).data).count < 31 {
                _ = try erin.cancel(try erin.initiate(to: "alice").call().sessionId).call()
            }
            let firstPage = try a.logs()
            #expect(sessionIds(firstPage.data).count == 30 && firstPage.data?["next"]?.stringValue != nil)
        }

        @Test("REST: API key, call lookup, bad parameters and uids")
        func restErrors() throws {
            let h = try Harness()
            defer { h.finish() }
            let a = try h.device("alice", "a1"), b = try h.device("bob", "b1")
            let live = try a.initiate(to: "bob").call()
            let liveREST = try h.rest("GET", "/v1/calls/\(live.sessionId)")
            #expect(liveREST.status == 200 && liveREST.json == live.json)
            let ongoing = try b.accept(live.sessionId).call()
            #expect(try h.rest("GET", "/v1/calls/\(live.sessionId)").json == ongoing.json)
            let ended = try b.end(live.sessionId).call()
            #expect(try h.rest("GET", "/v1/calls/\(live.sessionId)").json == ended.json)
            let unknown = try h.rest("GET", "/v1/calls/\(String(repeating: "a", count: 32))")
            #expect(unknown.status == 404 && unknown.errorCode == "ERR_NOT_FOUND")

            for (method, path) in [
                ("GET", "/v1/calls/\(live.sessionId)"), ("GET", "/v1/users/alice/calls"),
                ("POST", "/v1/users/alice/tokens"), ("DELETE", "/v1/users/alice/tokens"),
            ] {
                for key in [nil, "wrong-key", ""] as [String?] {
                    let response = try h.rest(method, path, apiKey: key)
                    #expect(
                        response.status == 401 && response.errorCode == "ERR_UNAUTHORIZED",
                        "\(method) \(path) key \(key ?? "-"): \(response)")
                    #expect(response.response.header("Content-Type")?.hasPrefix("application/json") == true)
                }
            }

            let badParameters: [(String, String)] = [
                ("limit=0", "limit"), ("limit=101", "limit"), ("limit=abc", "limit"), ("callType=fax", "callType"),
                ("callStatus=nope", "callStatus"), ("direction=up", "direction"), ("with=a%20b", "with"),
                ("cursor=%21%21", "cursor"), ("cursor=AAAAAAAAAAA", "cursor"), ("bogus=1", "bogus"),
            ]
            for (query, name) in badParameters {
                let response = try h.rest("GET", "/v1/users/alice/calls?\(query)")
                #expect(response.status == 400 && response.errorCode == "ERR_BAD_REQUEST", "\(query): \(response)")
                #expect(response.errorMessage.contains(name), "\(query): \(response.errorMessage)")
            }
            for uid in ["a%20b", String(repeating: "u", count: 101), "a%2Fb"] {
                let response = try h.rest("GET", "/v1/users/\(uid)/calls")
                #expect(response.status == 400 && response.errorMessage.contains("uid"), "\(uid): \(response)")
            }
            #expect(try h.rest("PUT", "/v1/calls/\(live.sessionId)").status == 405)
        }
    }
}
