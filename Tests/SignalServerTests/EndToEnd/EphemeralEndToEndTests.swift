import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ringd --ephemeral` as a test suite uses it: started from an empty
/// directory with no configuration file, on a free port it prints, serving
/// a whole call with tokens minted over REST, and leaving no file behind.
@Suite("EndToEnd: ringd --ephemeral", .blocking)
struct EphemeralEndToEndTests {
    /// The regular files `pid` holds open (its descriptors' targets; sockets,
    /// pipes and devices are not files it made).
    static func openFiles(of pid: Int32) throws -> [String] {
        let directory = "/proc/\(pid)/fd"
        return try FileManager.default.contentsOfDirectory(atPath: directory).compactMap { name in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)
            guard let target, target.hasPrefix("/"), !target.hasPrefix("/dev/") else { return nil }
            return target
        }
    }

    @Test("from an empty directory: a call over tokens minted by REST, and no file anywhere")
    func aWholeCallLeavesNoFile() throws {
        let cwd = try TemporaryDirectory(prefix: "ringd-ephemeral-cwd")
        defer { cwd.remove() }
        try withRingd(config: nil, arguments: ["--ephemeral"], workingDirectory: cwd.path) { ringd in
            let port = ringd.port
            #expect(port != 8787, "a free port, not the default")

            let aliceToken = try SignalingIntegration.mintToken(port: port, uid: "alice").token
            let bobToken = try SignalingIntegration.mintToken(port: port, uid: "bob").token
            let alice = try SignalingIntegration.Device.connect(port: port)
            let bob = try SignalingIntegration.Device.connect(port: port)
            #expect(try alice.auth(token: aliceToken, deviceId: "a1").ok)
            #expect(try bob.auth(token: bobToken, deviceId: "b1").ok)

            let placed = try alice.initiate(to: "bob", "video").call()
            #expect(try bob.waitForEvent(placed.sessionId, .initiated).initiator == "alice")
            #expect(try bob.accept(placed.sessionId).call().status == .ongoing)
            #expect(try alice.waitForEvent(placed.sessionId, .ongoing).acceptedBy == "b1")
            let ended = try alice.end(placed.sessionId).call()
            #expect(ended.status == .ended && ended.endedBy == "alice")
            #expect(try bob.waitForEvent(placed.sessionId, .ended).endReason == .hangup)
            let stored = try SignalingIntegration.rest(port: port, "GET", "/v1/calls/\(placed.sessionId)")
            #expect(stored.status == 200 && stored.json?["status"] == .string("ended"), "\(stored)")
            let history = try SignalingIntegration.rest(port: port, "GET", "/v1/users/bob/calls")
            #expect(SignalingIntegration.sessionIds(history.json) == [placed.sessionId], "\(history)")
            #expect(try Self.openFiles(of: ringd.pid) == [ringd.logPath], "only its log, which the test opened")

            alice.close()
            bob.close()
            ringd.signal(SIGTERM)
            #expect(ringd.process.wait(timeout: 10) == .exited(0), "\(ringd.log)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: cwd.path) == [], "ringd wrote into its directory")
            #expect(ringd.log.contains("store in memory"), "\(ringd.log)")
        }
    }

    @Test(
        "a config.json in its directory is not read: the port stays free, and the test API can be turned on from the environment"
    )
    func ignoresAConfigFileNearby() throws {
        let cwd = try TemporaryDirectory(prefix: "ringd-ephemeral-cwd")
        defer { cwd.remove() }
        // Read as usual, this file would stop the start (an unknown key) or pin the port.
        try #"{"listen": {"port": 8787}, "noSuchKey": true}"#.write(
            toFile: cwd.file("config.json"), atomically: true,
            encoding: .utf8)
        let environment = ["RINGD_TESTING_ENABLED": "true", "RINGD_TESTING_KEY": "test-key-0123456789abcdef"]
        try withRingd(config: nil, environment: environment, arguments: ["--ephemeral"], workingDirectory: cwd.path) {
            ringd in
            let port = ringd.port
            #expect(port != 8787)
            let clock = try SignalingIntegration.rest(
                port: port, "GET", "/v1/test/clock", apiKey: nil,
                headers: ["X-Test-Key: test-key-0123456789abcdef"])
            #expect(clock.json?["mode"]?.stringValue == "real", "\(clock)")
            ringd.signal(SIGTERM)
            #expect(ringd.process.wait(timeout: 10) == .exited(0))
        }
    }
}
