import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// What a cluster transition costs in waits for PostgreSQL: one pipeline
/// that locks and reads, one that writes, notifies and commits.
@Suite("Cluster: round trips per transition", .serialized, .blocking)
struct ClusterRoundTripTests {
    @Test("connect, initiate, accept, signal and end take two round trips each")
    func twoRoundTripsPerTransition() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        let node = try ClusterDeadNodeTests.fakeNode(db)
        let clock = (wall: Int64(1_700_000_000_000), monotonic: Int64(1_000_000))
        let alice = Device(uid: "alice", deviceId: "a1", address: DeviceAddress(node: node, loop: 0, connection: 1))
        let bob = Device(uid: "bob", deviceId: "b1", address: DeviceAddress(node: node, loop: 0, connection: 2))
        var step = 0
        /// Runs `input` as a transaction; the round trips it took.
        func run(
            _ description: TransitionInput, _ input: @escaping SignalingService.Input
        ) throws -> Int {
            step += 1
            let before = db.roundTrips
            let transaction = ClusterTransaction(description: description, input: input)
            let start = transaction.start(
                on: db, settings: SignalingSettings(),
                now: SignalingTime(wall: clock.wall + Int64(step), monotonic: clock.monotonic + Int64(step)),
                node: node, leaseMillis: 10_000)
            _ = try transaction.run(start, on: db, webhooks: nil, frame: { _, _ in [] })
            return db.roundTrips - before
        }
        func request(_ request: ClientRequest, from device: Device) throws -> Int {
            try run(.request(request, id: "r\(step)", device: device)) { machine, now in
                machine.handle(request, id: "r", from: device, now: now)
            }
        }
        for device in [alice, bob] {
            #expect(
                try run(.connect(device, requestId: "auth", resumingAfter: nil)) { machine, now in
                    machine.connect(device, requestId: "auth", now: now)
                } == 2)
        }
        #expect(
            try request(
                .initiateCall(receiverId: "bob", callType: .audio, timeout: nil, metadata: nil, clientCallId: "c-1"),
                from: alice) == 2)
        let call = try #require(try db.liveCalls(ofAny: ["alice"]).first)
        #expect(call.status == .initiated)
        #expect(try request(.acceptCall(sessionId: call.sessionId), from: bob) == 2)
        #expect(try db.call(sessionId: call.sessionId)?.status == .ongoing)
        let offer = JSONValue.object([("sdp", .string(String(repeating: "v=0 ", count: 2500)))])
        #expect(try request(.signal(sessionId: call.sessionId, payload: offer), from: alice) == 2, "a large one too")
        #expect(try request(.endCall(sessionId: call.sessionId), from: alice) == 2)
        #expect(try db.call(sessionId: call.sessionId)?.status == .ended)
        #expect(
            try request(.endCall(sessionId: call.sessionId), from: alice) == 2, "answered from what the read returned")
        #expect(
            try run(.disconnect(bob)) { machine, now in machine.disconnect(bob, now: now) } == 2)
        #expect(!db.isInTransaction)
    }
}
