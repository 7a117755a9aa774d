import SignalProtocol
import Testing

@testable import SignalCore
@testable import SignalServer

/// The registry following another node's changes (cluster mode): the
/// users named get what the database holds, others stay, and how pushes
/// went is kept only for a device whose token stayed the same.
struct PushTokenRegistryTests {
    static func token(_ uid: String, _ deviceId: String, _ value: String) throws -> RegisteredPushToken {
        RegisteredPushToken(
            uid: uid, deviceId: deviceId,
            registration: try PushRegistration(platform: .fcm, token: value + String(repeating: "x", count: 32)),
            updatedAt: 0)
    }

    @Test func replacingUsersKeepsOthersAndTheStateOfUnchangedTokens() throws {
        let phone = try Self.token("bob", "phone", "a"), tablet = try Self.token("bob", "tablet", "b")
        let carol = try Self.token("carol", "phone", "c")
        let registry = PushTokenRegistry([phone, tablet, carol])
        for device in [phone, tablet] {
            registry.record(.sent, for: PushDeviceKey(uid: "bob", deviceId: device.deviceId), at: 5, error: nil)
        }
        let newTablet = try Self.token("bob", "tablet", "d"), dave = try Self.token("dave", "watch", "e")
        registry.replace(tokensOf: ["bob", "dave"], with: [phone, newTablet, dave])
        #expect(registry.tokens(of: "bob") == [phone, newTablet])
        #expect(registry.tokens(of: "carol") == [carol] && registry.tokens(of: "dave") == [dave])
        #expect(registry.devices(of: "bob").map(\.state.lastOutcome) == [.sent, nil])

        // Everyone's, after a reconnect: carol's token is gone from the database.
        registry.replace(tokensOf: nil, with: [phone, dave])
        #expect(registry.tokens(of: "carol").isEmpty && registry.tokens(of: "bob") == [phone])
    }
}
