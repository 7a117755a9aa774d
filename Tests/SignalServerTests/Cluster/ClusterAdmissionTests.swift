import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// What a cluster node's workers take and refuse: a full queue refuses
/// requests and WebSocket upgrades with a time to come back, a held lock
/// stalls a worker for a bounded time, and a request whose COMMIT's
/// outcome is unknown gets no answer that could be wrong.
@Suite("Cluster: admission, lock waits and unknown outcomes", .blocking)
struct ClusterAdmissionTests {
    typealias TestCluster = SignalingIntegration.TestCluster

    @Test("a full queue refuses requests with retryAfterMs and upgrades with 503; a held lock stalls a worker ~2.5 s")
    func fullQueueAndHeldLock() throws {
        let cluster = try TestCluster(
            nodes: 1, environment: ["RINGD_CLUSTER_WORKERS": "1", "RINGD_CLUSTER_MAX_QUEUED_INPUTS": "2"])
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        // Another session holds alice's lock: her transactions wait for it, and time out.
        let holder = try PostgresConnection(url: cluster.url)
        try holder.execute("SELECT pg_advisory_lock($1)", [String(PostgresConnection.lockKey("alice"))])
        let endUnknown = { try alice.send("endCall", [("sessionId", .string(UUID().uuidString.lowercased()))]) }
        let sent = Date()
        var ids = [try endUnknown()]
        // Once it runs (the auth was the first input to start), the queue is empty.
        #expect(
            waitUntil(timeout: 5) { (try? Self.metrics(cluster))?.contains("queue_wait_seconds_count 2") == true },
            "\((try? Self.metrics(cluster)) ?? "")")
        for _ in 0 ..< 7 { ids.append(try endUnknown()) }

        // The first runs (and waits); two wait in the queue; the rest are refused at once.
        var shed: [SignalingIntegration.Reply] = []
        for id in ids.suffix(5) { shed.append(try alice.result(for: id, timeout: 2)) }
        for reply in shed {
            #expect(reply.code == "ERR_UNAVAILABLE", "\(reply)")
            let retryAfter = reply.raw["error"]?["retryAfterMs"]?.integerValue ?? 0
            #expect(retryAfter >= 100 && retryAfter <= 10_000, "\(reply)")
        }
        let logs = try alice.logs()
        #expect(logs.code == "ERR_UNAVAILABLE" && logs.raw["error"]?["retryAfterMs"] != nil, "\(logs)")
        let upgrade = try SignalingIntegration.rest(port: cluster.port(0), "GET", "/v1/ws", apiKey: nil)
        #expect(upgrade.status == 503, "\(upgrade)")
        #expect(Int(upgrade.response.header("Retry-After") ?? "") ?? 0 >= 1, "\(upgrade.response.headers)")
        let metrics = try Self.metrics(cluster)
        #expect(metrics.contains("ringd_cluster_queued_inputs 2"), "\(metrics)")
        #expect(metrics.contains("ringd_cluster_shed_total 7"), "6 requests and an upgrade: \(metrics)")
        #expect(metrics.contains("ringd_cluster_queue_wait_seconds_count"), "\(metrics)")

        // The first gives up within the retry budget and one more lock timeout, not 5 × 5 s.
        let first = try alice.result(for: ids[0], timeout: 10)
        let waited = Date().timeIntervalSince(sent)
        #expect(first.code == "ERR_UNAVAILABLE" && first.raw["error"]?["retryAfterMs"] == nil, "\(first)")
        #expect(waited < 4, "a held lock stalled the worker \(waited) s")
        try holder.execute("SELECT pg_advisory_unlock_all()")
        for id in ids[1 ... 2] {
            let reply = try alice.result(for: id, timeout: 10)
            #expect(reply.code == "ERR_CALL_SESSION_NOT_FOUND", "queued behind the lock, then run: \(reply)")
        }
        #expect(try alice.request("getActiveCall").ok)
        #expect(try cluster.open(0, uid: "bob", deviceId: "b1").request("getActiveCall").ok)
    }

    static func metrics(_ cluster: TestCluster) throws -> String {
        try SignalingIntegration.rest(port: cluster.port(0), "GET", "/metrics").response.bodyText
    }

    @Test("a connection lost during COMMIT closes the device with 1011 instead of answering ERR_UNAVAILABLE")
    func connectionLostInCommit() throws {
        let cluster = try TestCluster(nodes: 1)
        let doomed = try cluster.open(0, uid: "doomed", deviceId: "d1")
        _ = try cluster.open(0, uid: "bob", deviceId: "b1")
        // At COMMIT (a deferred trigger) the worker's backend ends itself:
        // the node cannot tell whether the transaction committed.
        let db = try PostgresConnection(url: cluster.url)
        try db.execute(
            """
            CREATE FUNCTION end_own_backend() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$
            """)
        try db.execute(
            """
            CREATE CONSTRAINT TRIGGER end_in_commit AFTER INSERT ON calls DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW WHEN (NEW.initiator = 'doomed') EXECUTE FUNCTION end_own_backend()
            """)
        let id = try doomed.send("initiateCall", [("receiverId", .string("bob")), ("callType", .string("audio"))])
        #expect(try doomed.nextClose(timeout: 10) == .internalError, "\(cluster.logs)")
        #expect(throws: (any Error).self) { try doomed.result(for: id, timeout: 1) }
        try db.execute("DROP TRIGGER end_in_commit ON calls")

        // It reconnects and sees what the request did (here: nothing, it rolled back).
        let again = try cluster.open(0, uid: "doomed", deviceId: "d1")
        #expect(try again.activeCall() == nil)
        #expect(try again.initiate(to: "bob").ok, "\(cluster.logs)")
    }

    /// A user sending a transaction's worth of request (an `endCall` of a
    /// call that never was) as fast as `limits.requestsPerSecond` (20)
    /// lets one connection, until `stop` is set.
    static func flood(_ uid: String, port: Int, stop: Flag, ledger: ClusterWorkersTests.Ledger) {
        defer { ledger.finished(results: 0) }
        do {
            let device = try SignalingIntegration.Device.open(port: port, uid: uid, deviceId: "f")
            defer { device.close() }
            while !stop.isSet {
                let started = Date()
                let id = try device.send("endCall", [("sessionId", .string(UUID().uuidString.lowercased()))])
                let reply = try device.result(for: id, timeout: 10)
                if reply.code != "ERR_CALL_SESSION_NOT_FOUND" { ledger.fail("\(uid): \(reply)") }
                // Pacing to the rate limit, not waiting for anything.
                Thread.sleep(forTimeInterval: max(0, 0.05 - Date().timeIntervalSince(started)))
            }
        } catch {
            ledger.fail("\(uid): \(error)")
        }
    }

    /// The bound on the honest pair's setup p99, in ms: 100 alone on the
    /// machine (`make bench-flood` sets it); beside the other suites on a
    /// shared 2-core machine setups take longer whatever the flood does
    /// (about 230 ms measured), so there only a stall (seconds) fails it.
    static let setupP99Bound = ProcessInfo.processInfo.environment["RINGD_FLOOD_P99_MS"].flatMap(Double.init) ?? 1000

    @Test("four accounts flooding at their rate limit leave an honest pair's call setup p99 bounded (100 ms alone)")
    func floodLeavesHonestSetupsFast() throws {
        let cluster = try TestCluster(nodes: 1)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(0, uid: "bob", deviceId: "b1")
        let stop = Flag()
        let ledger = ClusterWorkersTests.Ledger()
        let port = cluster.port(0)
        for index in 0 ..< 4 {
            Thread { Self.flood("flood\(index)", port: port, stop: stop, ledger: ledger) }.start()
        }
        var setups: [Double] = []
        for _ in 0 ..< 100 {
            let started = Date()
            let placed = try alice.initiate(to: "bob").call()
            _ = try bob.waitForEvent(placed.sessionId, .initiated)
            #expect(try bob.accept(placed.sessionId).ok)
            _ = try alice.waitForEvent(placed.sessionId, .ongoing)
            setups.append(Date().timeIntervalSince(started) * 1000)
            let ended = try alice.end(placed.sessionId)
            #expect(ended.ok, "\(ended)")
            _ = try bob.waitForEvent(placed.sessionId, .ended)
            // Honest: within the rate limit (two requests a call each), paced, not waiting for anything.
            Thread.sleep(forTimeInterval: max(0, 0.15 - Date().timeIntervalSince(started)))
        }
        stop.set()
        #expect(waitUntil(timeout: 15) { ledger.done == 4 })
        #expect(ledger.failures.isEmpty, "\(ledger.failures.prefix(5))")
        let p99 = setups.sorted()[98]
        #expect(p99 <= Self.setupP99Bound, "setup p99 \(p99) ms, median \(setups.sorted()[50]) ms")
    }
}
