import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// Push tokens in a real SQLite file: one per device, moving between
/// devices, the per-user limit, purges that spare a newer registration, and
/// what a reopened store reads back.
@Suite(.blocking) struct CallStorePushTokenTests {
    static func token(_ uid: String, _ deviceId: String, _ hex: String, at updatedAt: Int64) -> RegisteredPushToken {
        RegisteredPushToken(
            uid: uid, deviceId: deviceId,
            registration: try! PushRegistration(platform: .apnsVoip, token: String(repeating: hex, count: 32)),
            updatedAt: updatedAt)
    }

    static func save(_ token: RegisteredPushToken, in store: CallStore, limit: Int = 10) throws -> PushTokenSaved {
        try waitForResult { store.savePushToken(token, limit: limit, completion: $0) }.get()
    }

    @Test func aTokenMovesAndTheOldestGoBeyondTheLimit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath)
        let moved = try Self.save(Self.token("carol", "phone", "ab", at: 1), in: store)
        #expect(moved.movedFrom.isEmpty)
        let taken = try Self.save(Self.token("dave", "phone", "ab", at: 2), in: store)
        #expect(taken.movedFrom == [PushDeviceKey(uid: "carol", deviceId: "phone")])
        _ = try Self.save(Self.token("dave", "tablet", "cd", at: 3), in: store, limit: 3)
        _ = try Self.save(Self.token("dave", "watch", "ef", at: 4), in: store, limit: 3)
        let evicted = try Self.save(Self.token("dave", "laptop", "01", at: 5), in: store, limit: 3)
        #expect(evicted.evicted == [PushDeviceKey(uid: "dave", deviceId: "phone")], "the one registered longest ago")
        let again = try Self.save(Self.token("dave", "watch", "ef", at: 6), in: store, limit: 3)
        #expect(again.evicted.isEmpty, "re-registering a device keeps the count")
        store.close()
        let reopened = try CallStore(path: directory.databasePath)
        defer { reopened.close() }
        let tokens = try reopened.loadPushTokens()
        #expect(Set(tokens.map { "\($0.uid)/\($0.deviceId)" }) == ["dave/tablet", "dave/watch", "dave/laptop"])
    }

    @Test(arguments: StoreLocation.allCases)
    func aPurgeSparesARegistrationMadeSinceThePushLeft(_ location: StoreLocation) throws {
        let opened = try TestStore(location)
        defer { opened.close() }
        let store = opened.store
        let device = PushDeviceKey(uid: "bob", deviceId: "iphone")
        let pushed = Self.token("bob", "iphone", "ab", at: 10)
        _ = try Self.save(pushed, in: store)
        _ = try Self.save(Self.token("bob", "iphone", "ab", at: 20), in: store)
        #expect(try waitForResult { store.deletePushToken(of: device, only: pushed, completion: $0) }.get() == false)
        let newer = Self.token("bob", "iphone", "ab", at: 20)
        #expect(try waitForResult { store.deletePushToken(of: device, only: newer, completion: $0) }.get() == true)
        #expect(try store.loadPushTokens().isEmpty)
        #expect(try waitForResult { store.deletePushToken(of: device, completion: $0) }.get() == false)
    }
}
