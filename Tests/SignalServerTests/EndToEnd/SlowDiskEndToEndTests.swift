import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The event loop never waits on the disk: `ringd` on one loop, its store on
/// a ``SlowDisk`` where every sync takes 1.5 s, while its threads wait on
/// that disk or on another process's lock. Throughout, `GET /healthz`
/// answers within 50 ms, and no sync ever runs on a loop's thread.
@Suite("EndToEnd: the event loop never waits on a slow disk", .blocking)
struct SlowDiskEndToEndTests {
    typealias Device = SignalingIntegration.Device

    /// How long each sync of the store's files takes.
    static let syncMilliseconds = 1500
    /// The most a loop may take to answer while the store waits.
    static let bound = 0.050
    /// One loop: every connection and every commit of a loop's pass is on it.
    static let environment = [
        "RINGD_THREADS": "1", "RINGD_LIMITS_REQUESTS_PER_SECOND": "100000", "RINGD_LIMITS_REQUEST_BURST": "100000",
    ]

    /// `caller` calls `callee` and cancels: the seconds from sending the
    /// initiate until the callee heard it ring.
    static func ring(_ caller: Device, _ callee: Device, timeout: Double = 10) throws -> Double {
        let start = monotonicSeconds()
        let id = try caller.send("initiateCall", [("receiverId", .string(callee.uid)), ("callType", .string("audio"))])
        let ringing = try callee.nextEvent(timeout: timeout)
        let latency = monotonicSeconds() - start
        let call = try caller.result(for: id, timeout: timeout).call()
        #expect(ringing.sessionId == call.sessionId && ringing.status == .initiated, "\(ringing)")
        #expect(try caller.cancel(call.sessionId).ok)
        #expect(try callee.nextEvent(timeout: timeout).status == .cancelled)
        return latency
    }

    /// How long one `GET /healthz` took.
    static func healthz(_ port: Int) throws -> Double {
        let start = monotonicSeconds()
        let response = try SignalingIntegration.rest(port: port, "GET", "/healthz", apiKey: nil)
        #expect(response.status == 200)
        return monotonicSeconds() - start
    }

    @Test("slow checkpoint, log restart, another process's write lock: the loop answers within 50 ms")
    func theLoopNeverWaitsOnTheDisk() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let disk = try SlowDisk(under: directory.path, milliseconds: Self.syncMilliseconds)
        defer { disk.remove() }
        let environment = disk.environment.merging(Self.environment) { $1 }
        try withRingd(environment: environment, directory: directory.path) { ringd in
            let port = ringd.port
            let alice = try Device.open(port: port, uid: "alice", deviceId: "a")
            let bob = try Device.open(port: port, uid: "bob", deviceId: "b")
            defer { [alice, bob].forEach { $0.drop() } }
            _ = try Self.ring(alice, bob)
            disk.slow = true
            try Self.callsRingWhileACheckpointWaits(alice, bob, port: port, disk: disk)
            try Self.theWriterThreadStartsTheLogOver(
                alice, bob, port: port, disk: disk, store: directory.path + "/ringd.sqlite")
            try Self.theWriterThreadWaitsForAnotherProcess(
                alice, bob, port: port, store: directory.path + "/ringd.sqlite")
            let onLoops = disk.syncs.filter { $0.thread.hasPrefix("ringd-loop") }
            #expect(onLoops.isEmpty, "a loop synced the disk: \(onLoops)")
        }
    }

    /// Calls until ringd's checkpointer thread syncs (the log grew by 1,000
    /// pages), then, while that sync waits, rings three more and asks for
    /// `/healthz`: all within the bound, and the sync still running after.
    static func callsRingWhileACheckpointWaits(_ alice: Device, _ bob: Device, port: Int, disk: SlowDisk) throws {
        // Nothing else syncs the disk here: no log restart is due, no catch-up yet.
        func checkpointWaits() -> Bool { disk.syncs.contains { $0.slowed && !$0.ended } }
        var calls = 0
        while !checkpointWaits() {
            calls += 1
            try #require(calls <= 3000, "the checkpointer never synced: \(disk.syncs)")
            _ = try ring(alice, bob)
        }
        let rings = try (1 ... 3).map { _ in try ring(alice, bob) }
        let health = try healthz(port)
        #expect(checkpointWaits(), "the checkpoint's sync ended before the calls: they prove nothing")
        #expect(rings.allSatisfy { $0 < bound }, "ring latencies \(rings) s while a checkpoint waited")
        #expect(health < bound, "/healthz took \(health) s while a checkpoint waited")
        print("slow disk: ring latency \(rings) s, /healthz \(health) s while the checkpointer synced")
    }

    /// Once no sync runs, another process copies the whole log back, so
    /// the next commit starts the log over, which syncs its header: the
    /// writer thread's (the call rings once it is done), and meanwhile
    /// `/healthz` answers within the bound.
    static func theWriterThreadStartsTheLogOver(
        _ alice: Device, _ bob: Device, port: Int, disk: SlowDisk, store: String
    ) throws {
        let foreign = try ForeignStoreConnection(path: store)
        var copied: (log: Int32, copied: Int32)?
        // Busy until the checkpointer's pass has ended.
        _ = waitUntil(timeout: 20) {
            copied = try? foreign.checkpoint(); return copied != nil
        }
        let log = try #require(copied, "\(disk.syncs)")
        try #require(log.log > 0 && log.copied == log.log, "\(log)")
        let syncsBefore = disk.syncs.count
        let sampler = HealthzSampler(port: port)
        let latency = try ring(alice, bob)
        let (latencies, failures) = sampler.stop()
        let restart = disk.syncs.dropFirst(syncsBefore).filter { $0.path.hasSuffix("-wal") }
        #expect(
            restart.contains { $0.thread == "ringd-store" && $0.slowed },
            "the writer thread did not restart the log: \(restart)")
        #expect(failures.isEmpty, "\(failures)")
        #expect(!latencies.isEmpty && latencies.max()! < bound, "/healthz took up to \(latencies.max() ?? 0) s")
        print(
            "slow disk: log restart: ring latency \(latency) s (the header's sync), "
                + "/healthz max \(latencies.max() ?? 0) s over \(latencies.count)")
    }

    /// Another process holds the write lock: the loop's commit does not
    /// wait for it (the writer thread does), `/healthz` answers within the
    /// bound meanwhile, and the call rings once the lock is released.
    static func theWriterThreadWaitsForAnotherProcess(_ alice: Device, _ bob: Device, port: Int, store: String) throws {
        let holder = try ForeignStoreConnection(path: store)
        try holder.execute("BEGIN IMMEDIATE")
        let sampler = HealthzSampler(port: port)
        let id = try alice.send("initiateCall", [("receiverId", .string("bob")), ("callType", .string("audio"))])
        let sampledBefore = sampler.count
        let sampled = waitUntil(timeout: 10) { sampler.count >= sampledBefore + 20 }
        try holder.execute("ROLLBACK")
        let call = try alice.result(for: id, timeout: 10).call()
        #expect(try bob.nextEvent(timeout: 10).sessionId == call.sessionId)
        let (latencies, failures) = sampler.stop()
        #expect(sampled, "/healthz stalled while another process held the write lock")
        #expect(failures.isEmpty, "\(failures)")
        #expect(latencies.max()! < bound, "/healthz took up to \(latencies.max()!) s")
        #expect(try alice.cancel(call.sessionId).ok)
        print("slow disk: write lock held elsewhere: /healthz max \(latencies.max()!) s over \(latencies.count)")
    }
}
