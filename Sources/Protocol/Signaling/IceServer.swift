/// One STUN or TURN server for a WebRTC peer connection, in the shape of
/// the browser's `RTCIceServer`, so a page passes the list on as it is.
public struct IceServer: Hashable, Sendable {
    /// `stun:`, `stuns:`, `turn:` or `turns:` URLs of one server.
    public var urls: [String]
    /// For TURN: the user name (minted as `<expiry>:<uid>` with `webrtc.turnSecret`).
    public var username: String?
    /// For TURN: the password.
    public var credential: String?

    /// The URL schemes an ICE server may have.
    public static let schemes = ["stun:", "stuns:", "turn:", "turns:"]

    public init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }

    /// Whether any URL is a TURN one (which needs credentials).
    public var isTURN: Bool { urls.contains { $0.hasPrefix("turn:") || $0.hasPrefix("turns:") } }

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("urls", .array(urls.map(JSONValue.string)))]
        if let username { members.append(("username", .string(username))) }
        if let credential { members.append(("credential", .string(credential))) }
        return .object(members)
    }

    /// Decodes `{"urls": URL or [URL], "username"?, "credential"?}`; every URL
    /// must have an ICE scheme.
    public init(json: JSONValue) throws(SignalError) {
        let fields = JSONFields(json)
        switch json["urls"] {
        case .string(let url)?: urls = [url]
        case .array(let items)?:
            urls = items.compactMap(\.stringValue)
            guard urls.count == items.count else { throw SignalError(.validation, "urls must be strings") }
        default: throw SignalError(.validation, "urls must be a URL or a list of URLs")
        }
        guard !urls.isEmpty else { throw SignalError(.validation, "urls must not be empty") }
        if let bad = urls.first(where: { url in !Self.schemes.contains(where: url.hasPrefix) || url.contains(" ") }) {
            throw SignalError(.validation, "\(bad) is not a stun:, stuns:, turn: or turns: URL")
        }
        username = try fields.optionalString("username")
        credential = try fields.optionalString("credential")
    }
}

/// The answer to `getIceServers`: the servers, and when minted TURN
/// credentials among them expire.
public struct IceServerList: Hashable, Sendable {
    public var iceServers: [IceServer]
    /// Milliseconds since the Unix epoch; nil when no credential expires.
    public var expiresAt: Int64?

    public init(iceServers: [IceServer], expiresAt: Int64?) {
        self.iceServers = iceServers
        self.expiresAt = expiresAt
    }
}
