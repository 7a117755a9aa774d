import Foundation
import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// deploy/config/production.json, the configuration the image and the
/// Kubernetes ConfigMap ship, and the cluster manifest's configuration.
@Suite(.blocking) struct DeployConfigTests {
    private static let path = Repository.root() + "/deploy/config/production.json"
    private static let kubernetes = Repository.root() + "/deploy/kubernetes/ringd.yaml"
    private static let cluster = Repository.root() + "/deploy/kubernetes/ringd-cluster.yaml"

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
        let config = try ConfigLoader.load(
            path: Self.path,
            environment: [
                "RINGD_AUTH_API_KEYS": "k8s-api-key", "RINGD_AUTH_TOKEN_SECRET": "0123456789abcdef0123",
            ])
        #expect(config.apiKeys == ["k8s-api-key"])
        #expect(config.tokenSecret == "0123456789abcdef0123")
    }

    /// The ConfigMap holds a copy (YAML cannot include a file): the lines
    /// indented under `config.json: |`, as JSON, equal production.json.
    @Test func kubernetesConfigMapMatchesProductionConfig() throws {
        let embedded = try Self.embeddedConfig(Self.kubernetes)
        let production = try JSONValue.parse(try String(contentsOfFile: Self.path, encoding: .utf8))
        #expect(embedded == production)
    }

    /// Service links would put RINGD_SERVICE_HOST, RINGD_PORT, … into the
    /// pods; ringd passes them over, but the manifests turn them off.
    @Test func bothManifestsTurnServiceLinksOff() throws {
        for manifest in [Self.kubernetes, Self.cluster] {
            let text = try String(contentsOfFile: manifest, encoding: .utf8)
            #expect(text.contains("\n      enableServiceLinks: false\n"), "\(manifest)")
        }
    }

    /// deploy/kubernetes/ringd-cluster.yaml: the store in PostgreSQL, a
    /// lease, and nothing secret or not yet supported in the ConfigMap.
    @Test func clusterConfigMapUsesPostgresAndHoldsNoSecrets() throws {
        let config = try Self.embeddedConfig(Self.cluster)
        #expect(config["store"]?["backend"] == .string("postgres"))
        #expect(config["store"]?["path"] == nil, "a node keeps no store of its own")
        #expect(config["cluster"]?["leaseSeconds"]?.integerValue == 10)
        #expect(config["store"]?["url"] == nil, "the URL holds the database password: it belongs in the Secret")
        #expect(config["auth"]?["tokenSecret"] == nil, "every node's token secret comes from the Secret")
        for unsupported in ["testing"] {
            #expect(config[unsupported] == nil, "\(unsupported) is not supported with the postgres backend yet")
        }
    }

    /// What the cluster shares with a single node is production.json's.
    @Test func clusterConfigMapAgreesWithProductionConfig() throws {
        let config = try Self.embeddedConfig(Self.cluster)
        let production = try JSONValue.parse(try String(contentsOfFile: Self.path, encoding: .utf8))
        for (section, value) in config.objectMembers ?? [] {
            guard let members = value.objectMembers else {
                #expect(production[section] == value, "\(section)")
                continue
            }
            for (name, member) in members {
                if let single = production[section]?[name] { #expect(member == single, "\(section).\(name)") }
            }
        }
    }

    /// The cluster ConfigMap loads through ConfigLoader with the
    /// environment the Deployment gives from the Secret.
    @Test func clusterConfigMapLoadsWithTheSecretsEnvironment() throws {
        let manifest = try String(contentsOfFile: Self.cluster, encoding: .utf8)
        let secret = Self.stringData(manifest)
        var environment: [String: String] = [:]
        for (name, key) in Self.secretReferences(manifest) {
            let value: String = try #require(secret[key], "\(name) names \(key), which the Secret lacks")
            environment[name] = value
        }
        #expect(environment.keys.sorted() == ["RINGD_AUTH_API_KEYS", "RINGD_AUTH_TOKEN_SECRET", "RINGD_STORE_URL"])
        #expect(environment["RINGD_STORE_URL"]?.hasPrefix("postgresql://") == true)
        let config = try Self.embeddedConfig(Self.cluster)
        let loaded = try ConfigLoader.load(
            bytes: Array(config.serialized.utf8), source: Self.cluster, environment: environment)
        #expect(loaded.cluster.backend == .postgres)
        #expect(loaded.cluster.url == environment["RINGD_STORE_URL"])
        #expect(loaded.cluster.leaseSeconds == 10)
        #expect(loaded.authKeys.isEmpty)
        #expect(loaded.apiKeys == [try #require(secret["apiKeys"])])
        #expect(loaded.tokenSecret == secret["tokenSecret"])
        #expect(loaded.host == "0.0.0.0")
        #expect(loaded.reconnectGrace == 10)
    }

    /// The lines indented under `config.json: |` in the manifest at `path`, as JSON
    /// (YAML cannot include a file, so the ConfigMap holds a copy).
    private static func embeddedConfig(_ path: String) throws -> JSONValue {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(
            lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "config.json: |" },
            "no config.json block in \(path)")
        let block = lines[(start + 1)...].prefix { $0.hasPrefix("    ") }.joined(separator: "\n")
        return try JSONValue.parse(block)
    }

    /// The Secret's `stringData`: `  name: "value"` lines, comments skipped.
    private static func stringData(_ manifest: String) -> [String: String] {
        let lines = manifest.split(separator: "\n")
        guard let start = lines.firstIndex(of: "stringData:") else { return [:] }
        var values: [String: String] = [:]
        for line in lines[(start + 1)...].prefix(while: { $0.hasPrefix("  ") }) {
            let entry = line.trimmingCharacters(in: .whitespaces)
            guard !entry.hasPrefix("#"), let colon = entry.firstIndex(of: ":") else { continue }
            let value = entry[entry.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            values[String(entry[..<colon])] = value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return values
    }

    /// Each environment variable the Deployment takes from a Secret, with
    /// the Secret's key: `- name: X` two lines above `secretKeyRef: { name: …, key: K }`.
    private static func secretReferences(_ manifest: String) -> [(name: String, key: String)] {
        let lines = manifest.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        return lines.indices.compactMap { index in
            guard lines[index].hasPrefix("- name: "), index + 2 < lines.count,
                lines[index + 2].hasPrefix("secretKeyRef: {"),
                let key = lines[index + 2].split(separator: "key: ").last?.split(separator: " ").first
            else { return nil }
            return (String(lines[index].dropFirst("- name: ".count)), String(key))
        }
    }
}
