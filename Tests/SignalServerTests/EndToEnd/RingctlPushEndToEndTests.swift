import Foundation
import SignalProtocol
import TestSupport
import Testing

/// `ringctl push` against a ringd process: a device's token set and removed
/// over the WebSocket, as REST then shows it, and the usage errors.
@Suite("EndToEnd: ringctl push", .blocking)
struct RingctlPushEndToEndTests {
    static let token = String(repeating: "5f", count: 32)

    @Test func aTokenIsSetAndRemovedForTheDevice() throws {
        try withRingd { ringd in
            let set = try RingctlProcess(
                [
                    "--as", "bob", "--device", "bob-iphone", "--json", "push", "apns-voip",
                    Self.token.uppercased(), "--topic", "com.example.app", "--environment", "sandbox",
                    "--alert-token", String(repeating: "C3", count: 32),
                ],
                port: ringd.port)
            #expect(set.exitStatus() == 0, "\(set.errorOutput)")
            let line = try #require(set.jsonLines.first { $0["event"]?.stringValue == "pushToken" }, "\(set.output)")
            #expect(line["pushToken"]?["token"]?.stringValue == Self.token)
            #expect(line["pushToken"]?["environment"]?.stringValue == "sandbox")
            #expect(line["pushToken"]?["alertToken"]?.stringValue == String(repeating: "c3", count: 32))
            let listed = try SignalingIntegration.rest(
                port: ringd.port, "GET", "/v1/users/bob/devices/bob-iphone/push-token")
            #expect(
                listed.status == 200 && listed.json?["pushToken"]?["topic"]?.stringValue == "com.example.app",
                "\(listed)")

            let removed = try RingctlProcess(
                ["--as", "bob", "--device", "bob-iphone", "push", "--remove"], port: ringd.port)
            #expect(removed.exitStatus() == 0, "\(removed.errorOutput)")
            #expect(
                removed.output.contains { $0.contains("push token of bob/bob-iphone removed") }, "\(removed.output)")
            #expect(
                try SignalingIntegration.rest(port: ringd.port, "GET", "/v1/users/bob/devices/bob-iphone/push-token")
                    .status
                    == 404)
        }
    }

    @Test(arguments: [
        (["--as", "bob", "push", "fcm", String(repeating: "x", count: 40)], "push needs --device ID"),
        (["--as", "bob", "--device", "p", "push", "sms", "x"], "PLATFORM must be apns-voip or fcm"),
        (["--as", "bob", "--device", "p", "push", "apns-voip", "zz"], "hex digits"),
        (["--as", "bob", "--device", "p", "push", "apns-voip"], "push needs PLATFORM and TOKEN"),
        (["--as", "bob", "--device", "p", "push", "--remove", "--topic", "a.b"], "--remove takes no --topic"),
    ])
    func usageErrorsExit2(_ arguments: [String], _ message: String) throws {
        let process = try RingctlProcess(arguments, port: 1)
        #expect(process.exitStatus() == 2)
        #expect(process.errorOutput.contains(message), "\(process.errorOutput)")
    }
}
