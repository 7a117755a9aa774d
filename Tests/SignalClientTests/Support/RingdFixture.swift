import Foundation
import SignalClient
import SignalCore
import SignalCrypto
import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// A real ringd in-process on a free loopback port, its store in a fresh
/// temporary directory; ``stop()`` shuts it down and removes the directory.
final class RingdFixture: Sendable {
    let server: Server
    let endpoint: ServerEndpoint
    private let directory: String

    /// The shipped development keys.
    static let authKey = "ringd-dev-auth-key"
    static let apiKey = "ringd-dev-api-key"

    /// Starts a server; `adjust` changes the test configuration first.
    init(_ adjust: (inout ServerConfig) -> Void = { _ in }) throws {
        Self.prepareProcess()
        directory = "/tmp/ringd-client-tests-\(SessionID.random())"
        var config = ServerConfig()
        config.host = "127.0.0.1"
        config.port = 0
        config.threads = 2
        config.storePath = "\(directory)/ringd.sqlite"
        config.requestsPerSecond = 10_000
        config.requestBurst = 10_000
        adjust(&config)
        server = try Server(config: config, application: try Ringd(config: config))
        let listener = server.listeners[0]
        endpoint = ServerEndpoint(host: "127.0.0.1", port: listener.address.port, isSecure: listener.isSecure)
    }

    /// The data directory (the store's), for files a test puts next to it.
    var dataDirectory: String { directory }

    /// The REST client with the development API key.
    var rest: RestClient { RestClient(endpoint: endpoint, apiKey: Self.apiKey) }

    /// A device of `uid` authenticated with the development key, at
    /// `endpoint` (default: the server's first listener).
    func connect(
        _ uid: String, device: String? = nil, reconnect: Bool = false, endpoint: ServerEndpoint? = nil,
        verification: TLSVerification = .systemRoots
    ) async throws -> SignalClient {
        var options = ConnectOptions(deviceId: device, reconnect: reconnect)
        options.tlsVerification = verification
        return try await SignalClient.connect(
            to: endpoint ?? self.endpoint,
            credentials: .authKey(uid: uid, key: Self.authKey), options: options)
    }

    /// Shuts the server down and waits for it on a thread of its own.
    func stop() async {
        let server = self.server
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                server.shutdown()
                server.wait()
                continuation.resume()
            }.start()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Once per process: ignore SIGPIPE (the server writes with `writev`) and keep logs to errors.
    private static let prepared: Void = {
        signal(SIGPIPE, SIG_IGN)
        Log.level = .error
    }()

    private static func prepareProcess() { _ = prepared }
}

/// Runs `body` against a fresh server, stopping it afterwards whatever happens.
func withRingd(
    _ adjust: (inout ServerConfig) -> Void = { _ in },
    _ body: (RingdFixture) async throws -> Void
) async throws {
    let ringd = try RingdFixture(adjust)
    do {
        try await body(ringd)
    } catch {
        await ringd.stop()
        throw error
    }
    await ringd.stop()
}
