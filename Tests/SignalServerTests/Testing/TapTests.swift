import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// The tap: every transition, in order, with the calls before and after and
/// what each device was told.
@Suite("Test API: the tap", .blocking)
struct TapTests {
    @Test("the tap streams every transition of a full call in order, with before and after")
    func fullCall() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let tap = try TestWebSocket.connect(
            port: rig.port, path: "/v1/test/tap", headers: ["X-Test-Key: \(TestAPIRig.key)"])
        defer { tap.close() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        let call = try alice.initiate(to: "bob").call()
        #expect(try bob.accept(call.sessionId).ok)
        #expect(try alice.end(call.sessionId).ok)
        try SignalingIntegration.expectOne([alice], .ongoing, call.sessionId)
        #expect(try bob.drainEvents().map(\.status) == [.initiated, .ended])

        var records: [JSONValue] = []
        while records.count < 5 {
            let message = try tap.nextMessage()
            records.append(try JSONValue.parse(message.payload))
        }
        let inputs = records.map {
            [
                $0["input"]?["type"]?.stringValue,
                $0["input"]?["request"]?.stringValue ?? $0["input"]?["uid"]?.stringValue,
            ]
        }
        #expect(
            inputs == [
                ["connect", "alice"], ["connect", "bob"], ["request", "initiateCall"],
                ["request", "acceptCall"], ["request", "endCall"],
            ])
        let seqs = records.compactMap { $0["seq"]?.integerValue }
        #expect(seqs == Array(seqs[0] ..< seqs[0] + 5))
        #expect(records.allSatisfy { $0["committed"]?.boolValue == true })
        let statuses = records.dropFirst(2).map { record -> [String?] in
            let change = record["changes"]?[0]
            return [change?["before"]?["status"]?.stringValue, change?["after"]?["status"]?.stringValue]
        }
        #expect(statuses == [[nil, "initiated"], ["initiated", "ongoing"], ["ongoing", "ended"]])
        // The accept: bob's result, the ring timer cancelled, then alice told.
        let accept = records[3]["actions"]
        #expect(accept?[0]?["type"]?.stringValue == "reply")
        #expect(accept?[0]?["to"]?["uid"]?.stringValue == "bob")
        #expect(accept?[1]?["type"]?.stringValue == "cancel")
        #expect(accept?[1]?["timer"]?.stringValue == "ring")
        #expect(accept?[2]?["type"]?.stringValue == "event")
        #expect(accept?[2]?["to"]?[0]?["uid"]?.stringValue == "alice")

        let kept = try rig.transitions(sessionId: call.sessionId)
        #expect(kept.count == 3)
        #expect(kept.map { $0["seq"] } == records.dropFirst(2).map { $0["seq"] })
    }

    @Test("a relayed signal is in the tap as who signalled whom, without its payload")
    func signal() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        let call = try alice.initiate(to: "bob").call()
        #expect(try bob.accept(call.sessionId).ok)
        #expect(
            try alice.signal(call.sessionId, .object([("kind", .string("offer")), ("sdp", .string("secret-sdp"))])).ok)
        let kept = try rig.transitions(sessionId: call.sessionId)
        let relay = try #require(kept.last, "\(kept)")
        #expect(relay["input"]?["request"]?.stringValue == "signal")
        #expect(relay["changes"] == .array([]))
        let actions = relay["actions"]
        #expect(actions?[0]?["type"]?.stringValue == "reply" && actions?[0]?["data"]?["delivered"] == .bool(true))
        #expect(actions?[1]?["type"]?.stringValue == "signal")
        #expect(actions?[1]?["sessionId"]?.stringValue == call.sessionId)
        #expect(actions?[1]?["to"]?["uid"]?.stringValue == "bob")
        #expect(!relay.serialized.contains("secret-sdp"))
    }

    @Test("a tap opened late replays the kept records after afterSeq, then streams the rest without a gap")
    func replay() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1")
        _ = try rig.device("bob", "b1")
        let call = try alice.initiate(to: "bob").call()
        let tap = try TestWebSocket.connect(
            port: rig.port, path: "/v1/test/tap?afterSeq=0",
            headers: ["X-Test-Key: \(TestAPIRig.key)"])
        defer { tap.close() }
        #expect(try alice.cancel(call.sessionId).ok)
        var types: [String?] = []
        while types.count < 4 {
            types.append(try JSONValue.parse(tap.nextMessage().payload)["input"]?["request"]?.stringValue)
        }
        #expect(types == [nil, nil, "initiateCall", "cancelCall"])
    }

    @Test("transitions page on with next, without skipping or repeating a record; a replaced device is named")
    func paging() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        for index in 0 ..< 5 { _ = try rig.device("user\(index)", "d1") }
        _ = try rig.device("user0", "d1")  // replaces the first user0/d1 connection
        var seen: [Int64] = []
        var after: Int64 = 0
        for _ in 0 ..< 10 {
            let page = try rig.call("GET", "/v1/test/transitions?afterSeq=\(after)&limit=2").json
            guard case .array(let records)? = page?["transitions"], !records.isEmpty else { break }
            seen += records.compactMap { $0["seq"]?.integerValue }
            after = page?["next"]?.integerValue ?? after
        }
        #expect(seen.count == 6 && seen == seen.sorted() && Set(seen).count == 6, "\(seen)")
        let filtered = try rig.call("GET", "/v1/test/transitions?uid=user0").json?["transitions"]
        guard case .array(let user0)? = filtered, let replace = user0.last else {
            throw SignalingIntegration.ClientError("no transitions of user0")
        }
        let close = replace["actions"]?[0]
        #expect(close?["type"]?.stringValue == "close" && close?["code"]?.integerValue == 4003)
        #expect(close?["to"]?["uid"]?.stringValue == "user0" && close?["to"]?["deviceId"]?.stringValue == "d1")
    }
}
