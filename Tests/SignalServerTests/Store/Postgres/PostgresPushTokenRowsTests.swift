import SignalProtocol
import Testing

@testable import SignalCore
@testable import SignalServer

/// Push tokens in PostgreSQL keep SQLite's rules: one per device, a token
/// on one device at a time (it moves), at most `limit` per user (the
/// oldest go), and a purge removes only the registration it was about.
@Suite(.serialized) struct PostgresPushTokenRowsTests {
    static func token(_ uid: String, _ deviceId: String, _ value: String, at: Int64) throws -> RegisteredPushToken {
        RegisteredPushToken(
            uid: uid, deviceId: deviceId,
            registration: try PushRegistration(platform: .fcm, token: value + String(repeating: "x", count: 32)),
            updatedAt: at)
    }

    @Test func tokensMoveAreLimitedAndPurgedOnlyWhileCurrent() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection(), other = try PostgresConnection(url: server.url)
        func save(_ token: RegisteredPushToken, limit: Int = 2, on db: PostgresConnection) throws -> PushTokenSaved {
            try db.transaction { () throws(PostgresError) in try db.savePushToken(token, limit: limit) }
        }

        let phone = try Self.token("bob", "phone", "t1", at: 1000)
        #expect(try save(phone, on: connection).movedFrom.isEmpty)
        let ipad = try PushRegistration(
            platform: .apnsVoip, token: String(repeating: "ab", count: 32), topic: "net.ringd.x",
            environment: .sandbox)
        let apns = RegisteredPushToken(uid: "bob", deviceId: "ipad", registration: ipad, updatedAt: 1500)
        _ = try save(apns, on: other)
        #expect(Set(try other.pushTokens()) == [phone, apns])

        // The same token signed in as carol moves; bob keeps the iPad.
        let moved = try save(try Self.token("carol", "phone", "t1", at: 2000), on: other)
        #expect(moved.movedFrom == [PushDeviceKey(uid: "bob", deviceId: "phone")])
        #expect(try connection.pushTokens(of: ["bob"]) == [apns])

        // A third device of carol's, limit 2: the oldest goes.
        _ = try save(try Self.token("carol", "laptop", "t2", at: 3000), on: connection)
        let third = try save(try Self.token("carol", "tablet", "t3", at: 4000), on: connection)
        #expect(third.evicted == [PushDeviceKey(uid: "carol", deviceId: "phone")])
        #expect(try connection.pushTokens(of: ["carol"]).map(\.deviceId).sorted() == ["laptop", "tablet"])

        // A purge of a registration replaced since removes nothing.
        let stale = try Self.token("carol", "tablet", "t3", at: 4000)
        _ = try save(try Self.token("carol", "tablet", "t4", at: 5000), on: other)
        #expect(
            try connection.deletePushToken(of: PushDeviceKey(uid: "carol", deviceId: "tablet"), only: stale) == false)
        #expect(try connection.deletePushToken(of: PushDeviceKey(uid: "carol", deviceId: "tablet")) == true)
        #expect(try connection.deletePushToken(of: PushDeviceKey(uid: "carol", deviceId: "tablet")) == false)
        #expect(try other.pushTokens().map(\.deviceId).sorted() == ["ipad", "laptop"])
    }
}
