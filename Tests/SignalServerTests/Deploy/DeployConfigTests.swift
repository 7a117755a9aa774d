import SignalServer
import Testing
import TestSupport

/// deploy/config/production.json, the configuration the image and the
/// Kubernetes ConfigMap ship.
@Suite(.blocking) struct DeployConfigTests {
    private static let path = Repository.root() + "/deploy/config/production.json"

    /// The TLS files are read when the server starts, not by the loader, so
    /// the paths need not exist here.
    @Test func productionConfigLoadsWithoutDevelopmentKeys() throws {
        let config = try ConfigLoader.load(path: Self.path, environment: [:])
        #expect(config.authKeys.isEmpty)
        #expect(config.apiKeys.isEmpty)
        #expect(config.tokenSecret == nil)
        #expect(config.host == "0.0.0.0")
        #expect(config.storePath == "/var/lib/ringd/ringd.sqlite")
        #expect(config.tlsCertificatePath?.hasPrefix("/etc/ringd/") == true)
        #expect(config.tlsPrivateKeyPath?.hasPrefix("/etc/ringd/") == true)
    }

    /// How the Secret's keys reach it (deploy/kubernetes/ringd.yaml).
    @Test func keysComeFromTheEnvironment() throws {
        let config = try ConfigLoader.load(path: Self.path, environment: [
            "RINGD_AUTH_API_KEYS": "k8s-api-key", "RINGD_AUTH_TOKEN_SECRET": "0123456789abcdef0123",
        ])
        #expect(config.apiKeys == ["k8s-api-key"])
        #expect(config.tokenSecret == "0123456789abcdef0123")
    }
}
