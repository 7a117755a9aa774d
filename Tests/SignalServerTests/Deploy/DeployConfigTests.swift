import Foundation
import SignalProtocol
import SignalServer
import Testing
import TestSupport

/// deploy/config/production.json, the configuration the image and the
/// Kubernetes ConfigMap ship.
@Suite(.blocking) struct DeployConfigTests {
    private static let path = Repository.root() + "/deploy/config/production.json"
    private static let kubernetes = Repository.root() + "/deploy/kubernetes/ringd.yaml"

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

    /// The ConfigMap holds a copy (YAML cannot include a file): the lines
    /// indented under `config.json: |`, as JSON, equal production.json.
    @Test func kubernetesConfigMapMatchesProductionConfig() throws {
        let manifest = try String(contentsOfFile: Self.kubernetes, encoding: .utf8)
        let lines = manifest.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "config.json: |" },
                                 "no config.json block in \(Self.kubernetes)")
        let block = lines[(start + 1)...].prefix { $0.hasPrefix("    ") }.joined(separator: "\n")
        let embedded = try JSONValue.parse(block)
        let production = try JSONValue.parse(try String(contentsOfFile: Self.path, encoding: .utf8))
        #expect(embedded == production)
    }
}
