import Foundation
import SignalProtocol
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

/// Several workers per node (`cluster.workers`): the same users driven
/// from two nodes with four workers each decide every request once, in
/// order, without a deadlock, and leave no call live.
@Suite("Cluster: parallel workers", .blocking)
struct ClusterWorkersTests {
    typealias TestCluster = SignalingIntegration.TestCluster

    static let users = ["u0", "u1", "u2", "u3", "u4", "u5"]
    static let rounds = 25

    /// What the hammer's devices saw, from their threads.
    final class Ledger: Sendable {
        private let state = Mutex<(failures: [String], done: Int, results: Int)>(([], 0, 0))

        func fail(_ failure: String) { state.withLock { $0.failures.append(failure) } }
        func finished(results: Int) {
            state.withLock {
                $0.done += 1; $0.results += results
            }
        }
        var failures: [String] { state.withLock { $0.failures } }
        var done: Int { state.withLock { $0.done } }
        var results: Int { state.withLock { $0.results } }
    }

    /// One user's device: each round it sends, without waiting, a call to
    /// a random other user and an answer to every call it knows of
    /// (accept what rings it, end or cancel the rest) and asks for its
    /// history, then reads until every result came, checking each came
    /// once and in the order sent.
    static func hammer(_ uid: String, port: Int, ledger: Ledger) {
        var results = 0
        defer { ledger.finished(results: results) }
        do {
            let device = try SignalingIntegration.Device.open(port: port, uid: uid, deviceId: "d")
            defer { device.close() }
            var known: [String: (status: String, mine: Bool)] = [:]
            var answered = Set<String>()
            for round in 0 ... rounds {
                var sent: [String] = []
                // The last round only clears up: what it knows is ended, cancelled or rejected.
                if round < rounds, let peer = users.filter({ $0 != uid }).randomElement() {
                    sent.append(
                        try device.send(
                            "initiateCall", [("receiverId", .string(peer)), ("callType", .string("audio"))]))
                }
                for (sessionId, call) in known.sorted(by: { $0.key < $1.key }) {
                    let type =
                        switch (call.status, call.mine) {
                        case ("initiated", false): round < rounds && Bool.random() ? "acceptCall" : "rejectCall"
                        case ("initiated", true): "cancelCall"
                        default: "endCall"
                        }
                    sent.append(try device.send(type, [("sessionId", .string(sessionId))]))
                }
                // Its answer must not overtake the results before it.
                sent.append(try device.send("getCallLogs", [("limit", .integer(1))]))
                var arrived: [String] = []
                let deadline = Date().addingTimeInterval(20)
                while arrived.count < sent.count, Date() < deadline {
                    let frame = try JSONValue.parse(try device.nextRawMessage(timeout: 20))
                    switch frame["type"]?.stringValue {
                    case "result":
                        let id = frame["id"]?.stringValue ?? "null"
                        if answered.contains(id) || arrived.contains(id) { ledger.fail("\(uid): \(id) answered twice") }
                        arrived.append(id)
                        results += 1
                        let code = frame["error"]?["code"]?.stringValue
                        if code == "ERR_UNAVAILABLE" || code == "ERR_INTERNAL" {
                            ledger.fail("\(uid): \(frame.serialized)")
                        }
                        if let call = frame["data"]?["call"], let sessionId = call["sessionId"]?.stringValue,
                            let status = call["status"]?.stringValue
                        {
                            known[sessionId] = (status, call["initiator"]?.stringValue == uid)
                        }
                    case "call":
                        guard let call = frame["call"], let sessionId = call["sessionId"]?.stringValue,
                            let status = call["status"]?.stringValue
                        else { continue }
                        known[sessionId] = (status, call["initiator"]?.stringValue == uid)
                    default:
                        continue
                    }
                }
                if arrived != sent { ledger.fail("\(uid) round \(round): sent \(sent), results came \(arrived)") }
                answered.formUnion(arrived)
                known = known.filter { $0.value.status == "initiated" || $0.value.status == "ongoing" }
            }
        } catch {
            ledger.fail("\(uid): \(error)")
        }
    }

    @Test("two nodes with four workers each: the same users hammered from both, every request answered once, in order")
    func hammer() throws {
        // Refusals over the rate limit are answered at once, before earlier results, as on one node: none here.
        let cluster = try TestCluster(
            nodes: 2, environment: ["RINGD_CLUSTER_WORKERS": "4", "RINGD_LIMITS_REQUEST_BURST": "10000"])
        let ledger = Ledger()
        for (index, uid) in Self.users.enumerated() {
            let port = cluster.port(index % 2)
            Thread { Self.hammer(uid, port: port, ledger: ledger) }.start()
        }
        #expect(waitUntil(timeout: 240) { ledger.done == Self.users.count }, "\(cluster.logs)")
        #expect(ledger.failures.isEmpty, "\(ledger.failures.prefix(20)) \(cluster.logs)")
        #expect(ledger.results > Self.users.count * Self.rounds, "\(ledger.results) results")
        #expect(!cluster.logs.contains("deadlock"), "\(cluster.logs)")
        let accepted = "SELECT count(*) FROM calls WHERE accepted_at IS NOT NULL"
        #expect(try PostgresRows.count(url: cluster.url, accepted) ?? 0 > 0, "some calls were accepted")
        // Every call ended: what one party could not end the other did, or its grace period will.
        let live = "SELECT count(*) FROM calls WHERE status IN ('initiated', 'ongoing')"
        #expect(
            waitUntil(timeout: 15) { (try? PostgresRows.count(url: cluster.url, live)) == 0 },
            "\(((try? PostgresRows.count(url: cluster.url, live)) ?? nil) ?? -1) calls live")
    }
}
