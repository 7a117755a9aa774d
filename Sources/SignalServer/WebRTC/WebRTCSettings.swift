import SignalProtocol

/// What ringd offers browsers and apps for their media (`webrtc.*`): the
/// softphone page, and the STUN/TURN servers `getIceServers` hands out.
public struct WebRTCSettings: Sendable {
    /// Whether `GET /phone/` serves the browser softphone (`webrtc.phone`).
    public var phonePage = true
    /// The servers every client gets (`webrtc.iceServers`), as configured.
    public var iceServers: [IceServer] = []
    /// The secret shared with the TURN server (`webrtc.turnSecret`, coturn's
    /// `static-auth-secret`): TURN entries without a username get fresh
    /// credentials for the asking user (``TURNCredentials``).
    public var turnSecret: String?
    /// How long minted TURN credentials last (`webrtc.turnCredentialSeconds`).
    /// A relay allocation is refreshed with the same credentials, so a call
    /// that outlasts them loses its relay: a day, as the TURN REST API draft suggests.
    public var turnCredentialSeconds = 86_400

    public init() {}

    /// Parses `webrtc.iceServers`: a list of `{"urls", "username"?, "credential"?}`.
    static func iceServers(from value: JSONValue) -> Result<[IceServer], SignalError> {
        guard case .array(let entries) = value else { return .failure(SignalError(.validation, "not a list")) }
        var servers: [IceServer] = []
        for (index, entry) in entries.enumerated() {
            do throws(SignalError) {
                let server = try IceServer(json: entry)
                guard (server.username == nil) == (server.credential == nil) else {
                    throw SignalError(.validation, "username and credential must be set together")
                }
                servers.append(server)
            } catch {
                return .failure(SignalError(.validation, "entry \(index): \(error.message)"))
            }
        }
        return .success(servers)
    }
}

extension ConfigLoader {
    /// The `webrtc.*` keys.
    static let webRTCKeys: [Key] = [
        boolean("webrtc.phone", \.webrtc.phonePage),
        Key(
            path: "webrtc.iceServers",
            expectation: "a list of {\"urls\": stun:/stuns:/turn:/turns: URL or list of them, "
                + "\"username\" and \"credential\" (together) or neither}", isSecret: true,
            apply: { config, value in
                guard case .success(let servers) = WebRTCSettings.iceServers(from: value) else { return false }
                config.webrtc.iceServers = servers
                return true
            },
            explain: { value in
                guard case .failure(let error) = WebRTCSettings.iceServers(from: value) else { return nil }
                return error.message
            }),
        optionalSecret("webrtc.turnSecret", \.webrtc.turnSecret),
        integer("webrtc.turnCredentialSeconds", \.webrtc.turnCredentialSeconds, 60 ... 7 * 86_400),
    ]

    /// A TURN entry without credentials can only work when ringd mints them.
    static func validateWebRTC(_ config: ServerConfig, source: String) throws(ConfigError) {
        guard config.webrtc.turnSecret == nil,
            let index = config.webrtc.iceServers.firstIndex(where: { $0.isTURN && $0.username == nil })
        else { return }
        throw ConfigError(
            "\(source): \"webrtc.iceServers\" entry \(index) is a TURN server without \"username\" and "
                + "\"credential\": give them, or set \"webrtc.turnSecret\" for ringd to mint them")
    }
}
