import Foundation
import SignalCrypto
import SignalProtocol
import TestSupport
import Testing

/// The built ringd with secrets on disk and in URLs: a push key file others
/// could read stops the start with the chmod to run, and a webhook URL's
/// credentials stay out of the log.
@Suite("EndToEnd: secrets in files and URLs", .blocking)
struct SecretsEndToEndTests {
    /// The status and stderr of ringd started on `config`, which names key
    /// files in `directory`.
    static func start(_ config: JSONValue, in directory: TemporaryDirectory) throws -> (Int32?, String) {
        let path = directory.file("config.json")
        try config.serialized.write(toFile: path, atomically: true, encoding: .utf8)
        let errors = directory.file("stderr")
        let status = try RingdProcess.run(
            ["--config", path, "--ephemeral"], directory: directory.path, stderr: .file(errors), timeout: 5)
        let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        if case .exited(let code)? = status { return (code, text) }
        return (nil, text)
    }

    static func apns(_ keyFile: String) -> JSONValue {
        .object([
            ("listen", .object([("host", .string("127.0.0.1")), ("port", .integer(0))])),
            (
                "push",
                .object([
                    (
                        "apns",
                        .object([
                            ("keyFile", .string(keyFile)), ("keyId", .string("ABC123DEFG")),
                            ("teamId", .string("DEF123GHIJ")), ("bundleId", .string("com.example.app")),
                        ])
                    )
                ])
            ),
        ])
    }

    @Test func aPushKeyOthersCanReadStopsTheStartWithTheChmodToRun() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try directory.writeSecret(try SigningKey.generate(.es256), named: "AuthKey.p8")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)
        let (status, errors) = try Self.start(Self.apns(key), in: directory)
        #expect(status == 1, "\(errors)")
        #expect(errors.contains("push.apns.keyFile \(key): mode 0644 gives others access"), "\(errors)")
        #expect(errors.contains("run `chmod 600 \(key)`"), "\(errors)")
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: key)
        let (groupStatus, groupErrors) = try Self.start(Self.apns(key), in: directory)
        #expect(groupStatus == 1 && groupErrors.contains("mode 0640 gives its group access"), "\(groupErrors)")
    }

    @Test func aPushKeyOnlyItsOwnerReadsIsUsed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try directory.writeSecret(try SigningKey.generate(.es256), named: "AuthKey.p8")
        try withRingd(config: Self.apns(key).serialized) { ringd in
            let health = try SignalingIntegration.rest(port: ringd.port, "GET", "/healthz", apiKey: nil)
            #expect(health.status == 200, "\(health)")
        }
    }

    @Test func aWebhookURLsCredentialsStayOutOfTheLog() throws {
        let port = try #require(try SignalingIntegration.freePorts(1).first)  // nothing listens there
        let url = "http://hookuser:hookpass@127.0.0.1:\(port)/hook?token=t0ps3cret"
        let config: JSONValue = .object([
            (
                "webhooks",
                .object([
                    (
                        "endpoints",
                        .array([
                            .object([
                                ("url", .string(url)),
                                ("secrets", .array([.string(WebhookExample.firstSecret)])),
                            ])
                        ])
                    ),
                    ("retrySeconds", .array([.double(0.05)])),
                ])
            )
        ])
        try withRingd(config: config.serialized) { ringd in
            let alice = try SignalingIntegration.Device.open(port: ringd.port, uid: "alice", deviceId: "a1")
            #expect(try alice.initiate(to: "bob").ok)
            let shown = "webhook endpoint http://127.0.0.1:\(port)/hook failing"
            #expect(waitUntil(timeout: 10) { ringd.log.contains(shown) }, "\(ringd.log)")
            for secret in ["t0ps3cret", "hookpass", "hookuser"] {
                #expect(!ringd.log.contains(secret), "\(secret) in \(ringd.log)")
            }
        }
    }
}
