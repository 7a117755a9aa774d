import Testing

@testable import SignalServer

/// `store.backend`, `store.url`, `cluster.leaseSeconds`: what cluster mode
/// needs, what it refuses for now, and a URL that is never echoed.
@Suite(.blocking) struct ClusterConfigTests {
    @Test func aClusterNodeFromFileAndEnvironment() throws {
        let config = try loadConfig(
            #"{"store": {"backend": "postgres"}, "cluster": {"leaseSeconds": 2.5}}"#,
            environment: ["RINGD_STORE_URL": "postgresql://ringd:pw@db/ringd"]
        ).get()
        #expect(config.cluster.isEnabled && config.cluster.leaseSeconds == 2.5)
        #expect(config.cluster.url == "postgresql://ringd:pw@db/ringd")
        #expect(ServerConfig().cluster.backend == .sqlite && ServerConfig().cluster.leaseSeconds == 10)
    }

    @Test(arguments: [
        (#"{"store": {"backend": "postgres"}}"#, "needs \"store.url\""),
        (#"{"store": {"backend": "mysql"}}"#, "sqlite or postgres"),
        (#"{"cluster": {"leaseSeconds": 0.5}}"#, "from 1 to 300"),
        (
            #"{"store": {"backend": "postgres", "url": "host=/tmp"}, "testing": {"enabled": true, "key": "a-test-key-of-16-bytes"}}"#,
            "cannot run with \"store.backend\" postgres"
        ),
    ])
    func refused(json: String, saying expected: String) throws {
        let message = try configError(json)
        #expect(message.contains(expected), "\(message)")
    }

    @Test func pushRunsInACluster() throws {
        let json =
            #"{"store": {"backend": "postgres", "url": "host=/tmp"}, "push": {"fcm": {"serviceAccountFile": "/x.json"}}}"#
        let config = try loadConfig(json).get()
        #expect(config.cluster.isEnabled && config.push.isEnabled)
    }

    @Test func webhooksRunInClusterMode() throws {
        let config = try loadConfig(
            #"""
            {"store": {"backend": "postgres", "url": "host=/tmp"},
             "webhooks": {"endpoints": [{"url": "https://hooks.example/ringd", "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]}]}}
            """#
        ).get()
        #expect(config.cluster.isEnabled && config.webhooks.endpoints.map(\.url) == ["https://hooks.example/ringd"])
    }

    @Test func aBadURLIsNotEchoed() throws {
        let message = try configError(#"{"store": {"url": {"password": "hunter2"}}}"#)
        #expect(message.contains("store.url") && !message.contains("hunter2"), "\(message)")
    }
}
