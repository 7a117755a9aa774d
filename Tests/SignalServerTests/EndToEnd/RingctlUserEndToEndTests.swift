import Foundation
import SignalProtocol
import TestSupport
import Testing

/// `ringctl user` against a ringd process: a profile set, shown, and named
/// in a call; the usage errors.
@Suite("EndToEnd: ringctl user", .blocking)
struct RingctlUserEndToEndTests {
    @Test func aProfileIsSetShownAndNamesTheCaller() throws {
        try withRingd { ringd in
            let set = try RingctlProcess(
                [
                    "--json", "user", "set", "alice", "--name", "Alice Martin", "--avatar-url",
                    "https://cdn.example.com/alice.png",
                ], port: ringd.port)
            #expect(set.exitStatus() == 0, "\(set.errorOutput)")
            let line = try #require(set.jsonLines.first { $0["event"]?.stringValue == "user" }, "\(set.output)")
            #expect(line["user"]?["name"] == .string("Alice Martin"))
            let shown = try RingctlProcess(["user", "get", "alice"], port: ringd.port)
            #expect(shown.exitStatus() == 0, "\(shown.errorOutput)")
            #expect(
                shown.output.contains("alice · Alice Martin · https://cdn.example.com/alice.png"), "\(shown.output)")

            let a1 = try SignalingIntegration.Device.open(port: ringd.port, uid: "alice", deviceId: "a1")
            defer { a1.close() }
            #expect(try a1.initiate(to: "bob").call().initiatorName == "Alice Martin")

            let missing = try RingctlProcess(["user", "get", "nobody"], port: ringd.port)
            #expect(
                missing.exitStatus() == 1 && missing.errorOutput.contains("404 from ringd: nobody has no profile"),
                "\(missing.errorOutput)")
            for arguments in [
                ["user", "set", "alice"], ["user", "rename", "alice"], ["user", "get"],
                ["user", "set", "alice", "--name", "A", "--avatar-url", "http://plain.example/a.png"],
            ] {
                let usage = try RingctlProcess(arguments, port: ringd.port)
                #expect(usage.exitStatus() == 2, "\(arguments): \(usage.errorOutput)")
            }
        }
    }
}
