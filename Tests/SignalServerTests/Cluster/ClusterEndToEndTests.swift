import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The protocol's scenarios with the parties on different `ringd` nodes of
/// one cluster (docs/CLUSTER.md), each node a process, PostgreSQL real.
@Suite("Cluster: the ringing protocol across ringd nodes on PostgreSQL", .blocking)
struct ClusterEndToEndTests {
    typealias Device = SignalingIntegration.Device

    @Test("a call, a relayed signal, a hang-up, a cancel and a reject, the parties on two nodes")
    func callAcrossNodes() throws {
        let cluster = try SignalingIntegration.TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let placed = try alice.initiate(to: "bob")
        #expect(placed.ringing == 1, "\(placed) \(cluster.logs)")
        let sessionId = try placed.call().sessionId
        #expect(try bob.waitForEvent(sessionId, .initiated).initiator == "alice")
        #expect(try bob.accept(sessionId).call().status == .ongoing)
        #expect(try alice.waitForEvent(sessionId, .ongoing).acceptedBy == "b1")

        let sent = try alice.signal(sessionId, .object([("kind", .string("offer")), ("sdp", .string("v=0"))]))
        #expect(sent.data?["delivered"] == .bool(true), "\(sent)")
        #expect(try bob.nextSignal()["payload"]?["kind"] == .string("offer"))

        #expect(try bob.end(sessionId).call().status == .ended)
        let ended = try alice.waitForEvent(sessionId, .ended)
        #expect(ended.endedBy == "bob" && ended.endReason == .hangup)
        let stored = try #require(
            try SignalingIntegration.rest(port: cluster.port(0), "GET", "/v1/calls/\(sessionId)").json)
        #expect(stored["status"] == .string("ended"), "\(stored.serialized)")
        let logs = try alice.request("getCallLogs")
        #expect(logs.data?["logs"]?[0]?["sessionId"] == .string(sessionId), "\(logs)")

        let cancelled = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.waitForEvent(cancelled, .initiated)
        #expect(try alice.cancel(cancelled).call().status == .cancelled)
        #expect(try bob.waitForEvent(cancelled, .cancelled).endedBy == "alice")

        let rejected = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.waitForEvent(rejected, .initiated)
        #expect(try bob.reject(rejected, reason: "In a meeting").call().status == .rejected)
        let declined = try alice.waitForEvent(rejected, .rejected)
        #expect(declined.endedBy == "bob" && declined.rejectReason == "In a meeting")
        let history = try alice.request("getCallLogs")
        #expect(history.data?["logs"]?[0]?["rejectReason"] == .string("In a meeting"), "\(history)")
    }

    /// A media room token is minted on whichever node a party asks, from
    /// the call as the shared database holds it.
    @Test("getMediaToken on either node, for the parties of an ongoing call only")
    func mediaTokensAcrossNodes() throws {
        let config =
            #"{"media": {"livekit": {"url": "wss://media.example", "apiKey": "APIk", "apiSecret": "\#(String(repeating: "s", count: 32))"}}}"#
        let cluster = try SignalingIntegration.TestCluster(nodes: 2, config: config)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let carol = try cluster.open(1, uid: "carol", deviceId: "c1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.waitForEvent(sessionId, .initiated)
        #expect(try bob.accept(sessionId).ok)
        for device in [alice, bob] {
            let reply = try device.request("getMediaToken", [("sessionId", .string(sessionId))])
            #expect(reply.data?["url"] == .string("wss://media.example"), "\(reply)")
        }
        let stranger = try carol.request("getMediaToken", [("sessionId", .string(sessionId))])
        #expect(stranger.code == "ERR_CALL_NOT_A_PART", "\(stranger)")
    }

    /// A profile or a do-not-disturb set through one node rules a call
    /// placed on another: the transactions read them from the database.
    @Test("profiles and do-not-disturb set on one node hold on the other")
    func usersAcrossNodes() throws {
        let cluster = try SignalingIntegration.TestCluster(nodes: 2)
        let put = try SignalingIntegration.rest(
            port: cluster.port(1), "PUT", "/v1/users/alice", body: #"{"name":"Alice"}"#)
        #expect(put.status == 200, "\(put)")
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        #expect(try bob.request("setDoNotDisturb", [("mode", .string("busy"))]).ok)
        let busy = try alice.initiate(to: "bob").call()
        #expect(busy.status == .busy && busy.initiatorName == "Alice", "\(busy)")
        #expect(
            try SignalingIntegration.rest(port: cluster.port(0), "GET", "/v1/users/bob").json?["doNotDisturb"]
                == .object([("mode", .string("busy"))]))

        let silent = try SignalingIntegration.rest(
            port: cluster.port(0), "PUT", "/v1/users/bob/do-not-disturb", body: #"{"mode":"silent"}"#)
        #expect(silent.status == 200, "\(silent)")
        let quiet = try alice.initiate(to: "bob").call()
        #expect(quiet.status == .initiated && quiet.silent)
        let heard = try bob.waitForEvent(quiet.sessionId, .initiated)
        #expect(heard.silent && heard.initiatorName == "Alice")
        // A device arriving on the other node hears the setting.
        let bob2 = try Device.connect(port: cluster.port(0))
        defer { bob2.close() }
        #expect(try bob2.auth(uid: "bob", deviceId: "b2").data?["doNotDisturb"]?["mode"] == .string("silent"))
    }

    @Test("busy and glare are decided once across nodes")
    func busyAndGlare() throws {
        let cluster = try SignalingIntegration.TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let carol = try cluster.open(1, uid: "carol", deviceId: "c1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.accept(sessionId)
        let busy = try carol.initiate(to: "bob").call()
        #expect(busy.status == .busy, "\(busy)")
        #expect(try alice.end(sessionId).ok)

        // Glare: each calls the other at once, through different nodes.
        let erin = try cluster.open(0, uid: "erin", deviceId: "e1")
        let frank = try cluster.open(1, uid: "frank", deviceId: "f1")
        let erinAsked = try erin.send(
            "initiateCall", [("receiverId", .string("frank")), ("callType", .string("audio"))])
        let frankAsked = try frank.send(
            "initiateCall", [("receiverId", .string("erin")), ("callType", .string("audio"))])
        let erinCall = try erin.result(for: erinAsked).call(), frankCall = try frank.result(for: frankAsked).call()
        #expect(erinCall.sessionId == frankCall.sessionId, "\(erinCall) \(frankCall)")
        let glare = try erin.request("getActiveCall")
        #expect(glare.data?["call"]?["status"] == .string("ongoing"), "\(glare)")
    }

    @Test("two callee devices on two nodes accept at once: one wins, the other hears it")
    func acceptRace() throws {
        let cluster = try SignalingIntegration.TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let phone = try cluster.open(0, uid: "bob", deviceId: "phone")
        let laptop = try cluster.open(1, uid: "bob", deviceId: "laptop")
        let placed = try alice.initiate(to: "bob")
        #expect(placed.ringing == 2, "\(placed)")
        let sessionId = try placed.call().sessionId
        for device in [phone, laptop] { _ = try device.waitForEvent(sessionId, .initiated) }
        let phoneAsked = try phone.send("acceptCall", [("sessionId", .string(sessionId))])
        let laptopAsked = try laptop.send("acceptCall", [("sessionId", .string(sessionId))])
        let answers = [try phone.result(for: phoneAsked), try laptop.result(for: laptopAsked)]
        #expect(answers.filter(\.ok).count == 1, "\(answers)")
        let loser = answers[0].ok ? laptop : phone
        #expect(answers.first { !$0.ok }?.code == SignalErrorCode.alreadyJoined.rawValue, "\(answers)")
        let heard = try loser.waitForEvent(sessionId, .ongoing)
        #expect(heard.acceptedBy == (answers[0].ok ? "phone" : "laptop"), "\(heard)")
        _ = try alice.waitForEvent(sessionId, .ongoing)
    }

    @Test("the ring timeout fires, a lost device ends its call after grace, one back in time resumes on another node")
    func timersAndGrace() throws {
        let cluster = try SignalingIntegration.TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let unanswered = try alice.initiate(to: "bob", timeout: 1).call().sessionId
        #expect(try alice.waitForEvent(unanswered, .unanswered, timeout: 5).endReason == .timeout)
        _ = try bob.waitForEvent(unanswered, .unanswered, timeout: 5)

        let lost = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.accept(lost)
        alice.close()
        let ended = try bob.waitForEvent(lost, .ended, timeout: SignalingIntegration.TestCluster.graceSeconds + 5)
        #expect(ended.endReason == .connectionLost, "\(ended)")

        let kept = try cluster.open(0, uid: "alice", deviceId: "a1")
        let resumed = try kept.initiate(to: "bob").call()
        _ = try bob.accept(resumed.sessionId)
        kept.close()
        let back = try Device.connect(port: cluster.port(1))
        let auth = try back.request(
            "auth",
            [
                ("uid", .string("alice")), ("authKey", .string(SignalingIntegration.authKey)),
                (
                    "resume",
                    .object([
                        ("deviceId", .string("a1")),
                        ("afterSeq", .integer(resumed.seq)),
                    ])
                ),
            ])
        #expect(auth.data?["activeCall"]?["sessionId"] == .string(resumed.sessionId), "\(auth)")
        #expect(auth.data?["resumed"] == .bool(true), "\(auth)")
        _ = try bob.drainEvents()
        #expect(
            try bob.expectNoEvent(within: SignalingIntegration.TestCluster.graceSeconds + 1),
            "the call changed: \(bob.bufferedEvents)")
        #expect(try back.end(resumed.sessionId).ok)
    }
}
