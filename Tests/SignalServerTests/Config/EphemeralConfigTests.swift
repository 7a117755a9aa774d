import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// `ringd --ephemeral`'s configuration: a file if there is one, else the
/// defaults; a free port unless one is named; the store in memory always.
@Suite(.blocking) struct EphemeralConfigTests {
    static func ephemeral(
        _ contents: String?, environment: [String: String] = [:]
    ) throws -> Result<ServerConfig, ConfigError> {
        guard let contents else {
            return Result { () throws(ConfigError) in
                try ConfigLoader.loadEphemeral(path: nil, environment: environment)
            }
        }
        let file = try TempConfigFile(contents)
        defer { file.remove() }
        return Result { () throws(ConfigError) in
            try ConfigLoader.loadEphemeral(path: file.path, environment: environment)
        }
    }

    @Test func withoutAFileTheDefaultsOnAFreePortWithTheStoreInMemory() throws {
        let config = try Self.ephemeral(nil).get()
        let defaults = ServerConfig()
        #expect(config.port == 0 && config.host == defaults.host)
        #expect(config.storeIsInMemory && config.dataDirectory == nil)
        #expect(config.authKeys == defaults.authKeys && config.apiKeys == defaults.apiKeys)
        #expect(config.ringTimeout == defaults.ringTimeout && config.onRestart == defaults.onRestart)
    }

    @Test func theFileAndTheEnvironmentStillNameThePortButNotTheStore() throws {
        let file =
            #"{"listen": {"port": 9100}, "store": {"path": "/var/lib/ringd/ringd.sqlite"}, "calls": {"ringTimeoutSeconds": 20}}"#
        let fromFile = try Self.ephemeral(file).get()
        #expect(fromFile.port == 9100 && fromFile.ringTimeout == 20 && fromFile.storeIsInMemory)
        let fromEnvironment = try Self.ephemeral(
            file,
            environment: [
                "RINGD_LISTEN_PORT": "9200",
                "RINGD_STORE_PATH": "/tmp/ringd.sqlite",
            ]
        ).get()
        #expect(fromEnvironment.port == 9200 && fromEnvironment.storeIsInMemory)
        #expect(try Self.ephemeral(nil, environment: ["RINGD_LISTEN_PORT": "9300"]).get().port == 9300)
        #expect(
            try Self.ephemeral(#"{"logLevel": "debug"}"#).get().port == 0,
            "a file without listen.port keeps the free port")
    }

    @Test func withoutAFileARefusalNamesTheEnvironment() throws {
        let refused = try Self.ephemeral(nil, environment: ["RINGD_WS_PING_INTERVAL_SECONDS": "60"])
        #expect(throws: ConfigError.self) { try refused.get() }
        guard case .failure(let error) = refused else { return }
        #expect(
            error.message == #"the environment: "ws.pingTimeoutSeconds" must be greater than "ws.pingIntervalSeconds""#)
        #expect(throws: ConfigError.self) { try Self.ephemeral(nil, environment: ["RINGD_STORE": "x"]).get() }
    }

    /// A test server on loopback keeps the development keys; beyond it they
    /// are refused as for any ringd, unless the network is declared trusted.
    @Test func theDevelopmentKeysAreRefusedBeyondLoopbackAsAlways() throws {
        let open = try Self.ephemeral(nil, environment: ["RINGD_LISTEN_HOST": "0.0.0.0"])
        guard case .failure(let error) = open else {
            Issue.record("the development keys were accepted on 0.0.0.0")
            return
        }
        #expect(error.message.contains("is not loopback"), "\(error.message)")
        let trusted = try Self.ephemeral(
            nil,
            environment: [
                "RINGD_LISTEN_HOST": "0.0.0.0",
                "RINGD_AUTH_ALLOW_DEVELOPMENT_KEYS": "true",
            ]
        ).get()
        #expect(trusted.host == "0.0.0.0" && trusted.storeIsInMemory)
    }

    /// `store.path: ":memory:"` alone is a store in memory, nothing more: the
    /// port is the configured one.
    @Test func aMemoryStorePathWithoutEphemeralKeepsThePort() throws {
        let config = try loadConfig(#"{"store": {"path": ":memory:"}}"#).get()
        #expect(config.storeIsInMemory && config.dataDirectory == nil && config.port == ServerConfig().port)
        let fromEnvironment = try loadConfig("{}", environment: ["RINGD_STORE_PATH": ":memory:"]).get()
        #expect(fromEnvironment.storeIsInMemory)
        #expect(try loadConfig("{}").get().dataDirectory == "data")
    }
}
