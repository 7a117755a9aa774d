import SignalClient
import SignalCrypto
import SignalProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Where and as whom ringctl talks to ringd. Each setting comes from its flag,
/// else its `RINGCTL_…` environment variable, else the default of the shipped
/// config.json.
struct Settings: Sendable {
    /// The server when neither `--server` nor `RINGCTL_SERVER` is given.
    static let defaultServer = "ws://127.0.0.1:8787"
    /// The development auth key of the shipped config.json.
    static let defaultAuthKey = "ringd-dev-auth-key"
    /// The REST API key of the shipped config.json.
    static let defaultAPIKey = "ringd-dev-api-key"

    /// The server URLs as given (comma-separated when several), for messages.
    let server: String
    /// The parsed server URLs, in the order given; never empty. ringctl
    /// moves on to the next when one is unreachable.
    let endpoints: [ServerEndpoint]
    /// Who the user is, if `--as`, `--token` or their variables say.
    let credentials: Credentials?
    /// The REST API key.
    let apiKey: String
    /// This device's id; nil lets ringd assign one.
    let deviceId: String?
    /// How a `wss://` server's certificate is checked (`--ca-file`, `--insecure`).
    let tlsVerification: TLSVerification
    /// A warning to show before connecting (`--insecure` with TLS).
    let warning: String?
    /// Whether to offer permessage-deflate (`--compress`).
    let compression: Bool

    /// The settings of `arguments`, with `environment` looked up by variable name.
    init(_ arguments: Arguments, environment: (String) -> String? = Settings.environment) throws(Failure) {
        let given = arguments.allValues("--server")
        let lists = given.isEmpty ? [environment("RINGCTL_SERVER") ?? Self.defaultServer] : given
        server = lists.joined(separator: ",")
        var endpoints: [ServerEndpoint] = []
        for list in lists {
            do throws(ClientError) {
                endpoints += try ServerEndpoint.list(parsing: list)
            } catch {
                throw arguments.usage(error.message)
            }
        }
        self.endpoints = endpoints
        apiKey = arguments.value("--api-key") ?? environment("RINGCTL_API_KEY") ?? Self.defaultAPIKey
        deviceId = arguments.value("--device")
        compression = arguments.flag("--compress")
        if let deviceId, !Identifier.isValid(deviceId) {
            throw arguments.usage("\"\(deviceId)\" is not a valid device id (1–100 of A-Z a-z 0-9 . _ - @)")
        }
        credentials = try Self.credentials(arguments, environment: environment)
        let caFile = arguments.value("--ca-file") ?? environment("RINGCTL_CA_FILE")
        if arguments.flag("--insecure") {
            if arguments.value("--ca-file") != nil { throw arguments.usage("give --ca-file or --insecure, not both") }
            tlsVerification = .none
            warning =
                endpoints.contains(where: \.isSecure)
                ? "--insecure: the server's certificate is not checked; anyone on the path can read and change this session"
                : nil
        } else {
            if let caFile, access(caFile, R_OK) != 0 {
                throw arguments.usage("cannot read the CA file \(caFile) (--ca-file or RINGCTL_CA_FILE)")
            }
            tlsVerification = caFile.map { .caFile($0) } ?? .systemRoots
            warning = nil
        }
    }

    /// Flags beat variables: `--token`, then `--as`, then `RINGCTL_TOKEN`, then `RINGCTL_UID`.
    private static func credentials(
        _ arguments: Arguments,
        environment: (String) -> String?
    ) throws(Failure) -> Credentials? {
        let token = arguments.value("--token")
        let uid = arguments.value("--as")
        if token != nil && uid != nil { throw arguments.usage("give --as or --token, not both") }
        let key = arguments.value("--auth-key") ?? environment("RINGCTL_AUTH_KEY") ?? defaultAuthKey
        if let token { return .token(token) }
        if let uid { return try authKey(uid: uid, key: key, arguments) }
        if let token = environment("RINGCTL_TOKEN") { return .token(token) }
        if let uid = environment("RINGCTL_UID") { return try authKey(uid: uid, key: key, arguments) }
        return nil
    }

    /// Auth-key credentials for a checked uid.
    private static func authKey(uid: String, key: String, _ arguments: Arguments) throws(Failure) -> Credentials {
        guard Identifier.isValid(uid) else {
            throw arguments.usage("\"\(uid)\" is not a valid uid (1–100 of A-Z a-z 0-9 . _ - @)")
        }
        return .authKey(uid: uid, key: key)
    }

    /// A process environment variable; an empty one counts as unset.
    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    /// Connects to ringd with the user's credentials, which `command` requires.
    func connect(for command: Subcommand, reconnect: Bool) async throws(Failure) -> SignalClient {
        guard let credentials else {
            throw Failure.usage(
                "\(command.rawValue) needs a user: --as UID (or RINGCTL_UID), or --token TOKEN",
                command: command)
        }
        return try await connect(as: credentials, reconnect: reconnect)
    }

    /// Connects to ringd as `credentials`; with `reconnect`, the client comes
    /// back by itself after a dropped connection.
    func connect(as credentials: Credentials, reconnect: Bool) async throws(Failure) -> SignalClient {
        do throws(ClientError) {
            var options = ConnectOptions(deviceId: deviceId, reconnect: reconnect, compression: compression)
            options.tlsVerification = tlsVerification
            return try await SignalClient.connect(to: endpoints, credentials: credentials, options: options)
        } catch {
            throw Failure(error, server: server)
        }
    }

    /// Runs `request` with a REST client (with the API key) of each server
    /// in turn until one answers; returns the answer and the server that gave
    /// it. Only a server that did not handle the request moves on
    /// (``ClientError/isWorthAnotherRESTEndpoint``: unreachable, or HTTP 503):
    /// any other HTTP error is the answer, and a token minted twice, once on
    /// a node that then died, does no harm.
    func rest<Answer>(
        _ request: (RestClient) async throws(ClientError) -> Answer
    )
        async throws(Failure) -> (answer: Answer, endpoint: ServerEndpoint)
    {
        var failures: [(endpoint: ServerEndpoint, error: ClientError)] = []
        for endpoint in endpoints {
            var client = RestClient(endpoint: endpoint, apiKey: apiKey)
            client.tlsVerification = tlsVerification
            do throws(ClientError) {
                return (try await request(client), endpoint)
            } catch  where error.isWorthAnotherRESTEndpoint {
                failures.append((endpoint, error))
            } catch {
                throw Failure(error, server: server)
            }
        }
        throw Failure(ClientError(everyEndpointFailed: failures), server: server)
    }
}
