import Foundation
import SignalProtocol
import Synchronization
import Testing

@testable import SignalCore
@testable import SignalServer

/// A worker with the next transaction queued sends its read after the
/// running one's `COMMIT`, in the same round trip (``ClusterLookahead``):
/// K transitions back to back cost K + 1 round trips, and every path where
/// the read sent ahead cannot be used leaves the next transaction to read
/// by itself and commit.
@Suite("Cluster: the next transaction's read with the last one's commit", .serialized)
struct ClusterLookaheadTests {
    /// What one transition did on the worker.
    struct Entry: Sendable {
        let name: String
        /// Whether it started from a read that came with the previous commit.
        let prefetched: Bool
        let roundTrips: Int
        let error: String?
    }

    /// Transitions of a fake node run on a real worker, as the node runs
    /// them (without its retries), each noting what it did.
    final class Harness: Sendable {
        let node: Int64
        let worker: ClusterWorker
        private let ticks = Atomic<Int64>(0)
        private let entries = Mutex<[Entry]>([])
        private let replies = Mutex<[String: Result<JSONValue, SignalError>]>([:])

        init(_ server: ThrowawayPostgres, node: Int64) {
            self.node = node
            worker = ClusterWorker(url: server.url, leaseSeconds: 10, index: 0)
        }

        var log: [Entry] { entries.withLock { $0 } }
        func reply(_ id: String) -> Result<JSONValue, SignalError>? { replies.withLock { $0[id] } }

        /// A time later than every one before.
        private func now() -> SignalingTime {
            let tick = ticks.add(1, ordering: .relaxed).newValue
            return SignalingTime(wall: 1_700_000_000_000 + tick, monotonic: 1_000_000 + tick)
        }

        func submit(_ name: String, _ description: TransitionInput, _ input: @escaping SignalingService.Input) {
            let transaction = ClusterTransaction(description: description, input: input)
            let start: @Sendable (PostgresConnection) -> ClusterTransaction.Start = { [self] db in
                transaction.start(
                    on: db, settings: SignalingSettings(), now: now(), node: node, leaseMillis: 10_000)
            }
            worker.submit(
                .transaction(
                    ClusterWorker.Transaction(start: start) { [self] db, prefetched, next in
                        guard let db else {
                            return entries.withLock {
                                $0.append(
                                    Entry(
                                        name: name, prefetched: false, roundTrips: 0, error: "no connection"))
                            }
                        }
                        let before = db.roundTrips
                        var failure: String?
                        do {
                            _ = try transaction.run(
                                prefetched?.start ?? start(db), received: prefetched?.results, on: db, webhooks: nil,
                                frame: { id, reply in
                                    if let id { self.replies.withLock { $0[id] = reply } }
                                    return []
                                }, next: next)
                        } catch {
                            failure = "\(error)"
                        }
                        let entry = Entry(
                            name: name, prefetched: prefetched != nil, roundTrips: db.roundTrips - before,
                            error: failure)
                        entries.withLock { $0.append(entry) }
                    }))
        }

        func connect(_ device: Device) {
            submit("connect \(device.uid)", .connect(device, requestId: "auth", resumingAfter: nil)) { machine, now in
                machine.connect(device, requestId: "auth", now: now)
            }
        }

        func request(_ id: String, _ request: ClientRequest, from device: Device) {
            submit(id, .request(request, id: id, device: device)) { machine, now in
                machine.handle(request, id: id, from: device, now: now)
            }
        }

        func initiate(_ id: String, from device: Device, to receiver: String, clientCallId: String? = nil) {
            request(
                id,
                .initiateCall(
                    receiverId: receiver, callType: .audio, timeout: nil, metadata: nil, clientCallId: clientCallId),
                from: device)
        }

        /// Waits until `count` transitions ran.
        func wait(for count: Int) -> Bool { waitUntil(timeout: 30) { log.count >= count } }
    }

    static func device(_ uid: String, node: Int64, _ connection: UInt64) -> Device {
        Device(uid: uid, deviceId: "\(uid)-1", address: DeviceAddress(node: node, loop: 0, connection: connection))
    }

    @Test("K transitions queued back to back on one worker cost K + 1 round trips")
    func backToBackTransitionsCostOneRoundTripEach() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        let harness = Harness(server, node: try ClusterDeadNodeTests.fakeNode(db))
        let alice = Self.device("alice", node: harness.node, 1), bob = Self.device("bob", node: harness.node, 2)
        // Queued before the worker starts: one batch, one transaction after another.
        harness.connect(alice)
        harness.connect(bob)
        harness.initiate("first", from: alice, to: "bob", clientCallId: "c-1")
        // A retry: its read, sent with the first's COMMIT, must see that call.
        harness.initiate("retry", from: alice, to: "bob", clientCallId: "c-1")
        harness.submit("bob leaves", .disconnect(bob)) { machine, now in machine.disconnect(bob, now: now) }
        harness.submit("alice leaves", .disconnect(alice)) { machine, now in machine.disconnect(alice, now: now) }
        harness.worker.start()
        defer { harness.worker.stop() }
        #expect(harness.wait(for: 6))
        let log = harness.log
        #expect(log.allSatisfy { $0.error == nil }, "\(log)")
        #expect(log.map(\.prefetched) == [false, true, true, true, true, true])
        #expect(log.map(\.roundTrips).reduce(0, +) <= log.count + 1, "\(log.map(\.roundTrips))")
        let first = try #require(try harness.reply("first")?.get()["call"]?["sessionId"]?.stringValue)
        #expect(try harness.reply("retry")?.get()["call"]?["sessionId"]?.stringValue == first)
        #expect(try db.execute("SELECT count(*) FROM calls").int64(0, 0) == 1)
        #expect(try db.execute("SELECT count(*) FROM presence").int64(0, 0) == 0)
    }

    @Test("a timer another node fired, its read sent ahead, rolls back; the one after reads by itself")
    func timerFiredElsewhere() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        let harness = Harness(server, node: try ClusterDeadNodeTests.fakeNode(db))
        let alice = Self.device("alice", node: harness.node, 1)
        harness.connect(alice)
        // No timer row: whoever took it fired it.
        let timer = SignalingTimer.ring(sessionId: "gone")
        harness.submit("timer", .timer(timer)) { machine, now in machine.timerFired(timer, now: now) }
        harness.submit("alice leaves", .disconnect(alice)) { machine, now in machine.disconnect(alice, now: now) }
        harness.worker.start()
        defer { harness.worker.stop() }
        #expect(harness.wait(for: 3))
        let log = harness.log
        #expect(log.allSatisfy { $0.error == nil }, "\(log)")
        #expect(log.map(\.prefetched) == [false, true, false])
        #expect(log.map(\.roundTrips) == [2, 1, 2], "the ROLLBACK alone; then a read and the writes")
        #expect(try db.execute("SELECT count(*) FROM presence").int64(0, 0) == 0)
    }

    @Test("a write of N that fails takes the read sent with it along; N + 1 reads again and commits")
    func failingWriteLeavesTheNextToReadAgain() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        try db.run(
            script: """
                CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'refused'; END $$;
                CREATE TRIGGER refuse BEFORE INSERT ON calls FOR EACH ROW
                WHEN (NEW.initiator = 'mallory') EXECUTE FUNCTION refuse();
                """)
        let harness = Harness(server, node: try ClusterDeadNodeTests.fakeNode(db))
        let mallory = Self.device("mallory", node: harness.node, 1)
        let alice = Self.device("alice", node: harness.node, 2)
        for device in [mallory, alice, Self.device("bob", node: harness.node, 3)] { harness.connect(device) }
        harness.initiate("refused", from: mallory, to: "bob")
        harness.initiate("placed", from: alice, to: "bob")
        harness.worker.start()
        defer { harness.worker.stop() }
        #expect(harness.wait(for: 5))
        let log = harness.log
        #expect(log[3].name == "refused" && log[3].error?.contains("refused") == true, "\(log)")
        #expect(log[4].name == "placed" && log[4].error == nil && !log[4].prefetched, "\(log)")
        let placed = try #require(try harness.reply("placed")?.get()["call"]?["sessionId"]?.stringValue)
        #expect(try db.call(sessionId: placed)?.initiator == "alice")
        #expect(try db.execute("SELECT count(*) FROM calls").int64(0, 0) == 1)
    }

    @Test("a read sent ahead that finds more users to lock starts again with them")
    func readSentAheadThatAsksForAnotherRound() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        let harness = Harness(server, node: try ClusterDeadNodeTests.fakeNode(db))
        // zed's lock is held: the read sent with alice's commit waits for it.
        let holder = try PostgresConnection(url: server.url)
        try holder.execute("BEGIN")
        try holder.lockUsers(["zed"])
        // The worker's 500 ms lock timeout would race this test's steps on a busy machine.
        harness.worker.submit { db in _ = try? db?.execute("SET lock_timeout = 10000") }
        harness.connect(Self.device("alice", node: harness.node, 1))
        harness.connect(Self.device("zed", node: harness.node, 2))
        harness.worker.start()
        defer { harness.worker.stop() }
        #expect(
            waitUntil(timeout: 10) {
                (try? holder.execute("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").count)
                    == 1
            })
        // A call of zed's commits meanwhile, naming yan, whom the read did not lock.
        try holder.save(
            Call(
                sessionId: "late", callType: .audio, status: .initiated, initiator: "yan", receiver: "zed",
                initiatedAt: 1_700_000_000_000, timeoutMs: 30_000, seq: 8))
        try holder.execute("COMMIT")
        #expect(harness.wait(for: 2))
        let log = harness.log
        #expect(log.allSatisfy { $0.error == nil }, "\(log)")
        #expect(log.map(\.prefetched) == [false, true])
        #expect(log[1].roundTrips == 2, "another read, then the writes")
        #expect(try db.execute("SELECT uid FROM presence ORDER BY uid").string(1, 0) == "zed")
    }

    @Test("a connection that breaks in N's COMMIT leaves N + 1 to run on a new one")
    func connectionBrokenInCommit() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        try db.run(
            script: """
                CREATE FUNCTION end_own_backend() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$;
                CREATE CONSTRAINT TRIGGER end_in_commit AFTER INSERT ON calls DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW WHEN (NEW.initiator = 'doomed') EXECUTE FUNCTION end_own_backend();
                """)
        let harness = Harness(server, node: try ClusterDeadNodeTests.fakeNode(db))
        let doomed = Self.device("doomed", node: harness.node, 1), alice = Self.device("alice", node: harness.node, 2)
        for device in [doomed, alice, Self.device("bob", node: harness.node, 3)] { harness.connect(device) }
        harness.worker.start()
        defer { harness.worker.stop() }
        #expect(harness.wait(for: 3))
        // The next two in one batch of their own, whose first job may connect again.
        let hold = DispatchSemaphore(value: 0)
        harness.worker.submit { _ in hold.wait() }
        harness.initiate("doomed", from: doomed, to: "bob")
        harness.initiate("placed", from: alice, to: "bob")
        hold.signal()
        #expect(harness.wait(for: 5))
        let log = harness.log
        #expect(log[3].name == "doomed" && log[3].error != nil, "\(log)")
        #expect(log[4].name == "placed" && log[4].error == nil && !log[4].prefetched, "\(log)")
        #expect(try db.execute("SELECT initiator FROM calls").string(0, 0) == "alice")
    }
}
