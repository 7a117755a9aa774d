/// Where the server is: parsed from `ws://host:port`, `ws://host:port/v1/ws`,
/// `http://host:port` or `host:port` (default port 8787, default path `/v1/ws`;
/// an IPv6 host goes in brackets), or with TLS from `wss://host:port` or
/// `https://host:port` (default port 8443).
public struct ServerEndpoint: Sendable, Hashable {
    /// The host name or numeric address (IPv6 without brackets).
    public let host: String
    /// The TCP port.
    public let port: Int
    /// The WebSocket path, starting with `/`.
    public let path: String
    /// Whether the connection speaks TLS (`wss://`, `https://`).
    public let isSecure: Bool

    /// The port used when a plain-text URL names none.
    public static let defaultPort = 8787
    /// The port used when a TLS URL names none.
    public static let defaultSecurePort = 8443
    /// The path used when the URL names none.
    public static let defaultPath = "/v1/ws"

    /// Parses `url`; throws ``ClientErrorCode/badURL`` naming what is wrong.
    public init(url: String) throws(ClientError) {
        var rest = Substring(url.trimmed)
        var secure = false
        if let schemeEnd = rest.firstRange(of: "://") {
            let scheme = rest[..<schemeEnd.lowerBound].lowercased()
            switch scheme {
            case "ws", "http":
                break
            case "wss", "https":
                secure = true
            default:
                throw Self.bad("unsupported scheme \"\(scheme)\" (use ws://, wss://, http:// or https://)")
            }
            rest = rest[schemeEnd.upperBound...]
        }
        isSecure = secure
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let pathPart = rest[authorityEnd...]
        guard !pathPart.contains("#") else { throw Self.bad("a server URL has no fragment") }
        (host, port) = try Self.parseAuthority(
            authority, url: url,
            defaultPort: secure ? Self.defaultSecurePort : Self.defaultPort)
        if pathPart.isEmpty || pathPart == "/" {
            path = Self.defaultPath
        } else if pathPart.hasPrefix("/") {
            guard pathPart.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                throw Self.bad("the path must be printable ASCII without spaces")
            }
            path = String(pathPart)
        } else {
            throw Self.bad("the path must start with /")
        }
    }

    /// Parses a comma-separated list of server URLs (`ws://a:8787,ws://b:8788`),
    /// each in a form ``init(url:)`` takes, in the order given; a comma always
    /// separates, so no URL in the list may contain one. Throws
    /// ``ClientErrorCode/badURL`` naming the entry that is wrong (an empty one too).
    public static func list(parsing text: String) throws(ClientError) -> [ServerEndpoint] {
        var endpoints: [ServerEndpoint] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false).map({ String($0).trimmed }) {
            guard !entry.isEmpty else { throw bad("empty server URL in \"\(text)\"") }
            do throws(ClientError) {
                endpoints.append(try ServerEndpoint(url: entry))
            } catch {
                throw bad("bad server URL \"\(entry)\": \(error.message)")
            }
        }
        return endpoints
    }

    public init(host: String, port: Int = defaultPort, path: String = defaultPath, isSecure: Bool = false) {
        self.host = host
        self.port = port
        self.path = path
        self.isSecure = isSecure
    }

    /// `ws://host:port/path`, or `wss://…` with TLS.
    public var webSocketURL: String { "\(isSecure ? "wss" : "ws")://\(hostAndPort)\(path)" }

    /// `host:port`, with brackets around an IPv6 host (the `Host` header's form).
    public var hostAndPort: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func parseAuthority(
        _ authority: Substring, url: String,
        defaultPort: Int
    ) throws(ClientError) -> (String, Int) {
        guard !authority.isEmpty else { throw bad("no host in \"\(url)\"") }
        guard !authority.contains("@") else { throw bad("user information is not supported") }
        let hostPart: Substring
        let portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw bad("unclosed [ in the host") }
            hostPart = authority[authority.index(after: authority.startIndex) ..< close]
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                portPart = nil
            } else if after.hasPrefix(":") {
                portPart = after.dropFirst()
            } else {
                throw bad("unexpected text after the IPv6 address")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            guard authority.firstIndex(of: ":") == colon else {
                throw bad("an IPv6 host must be written in brackets, e.g. [::1]:8787")
            }
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        } else {
            hostPart = authority
            portPart = nil
        }
        guard !hostPart.isEmpty else { throw bad("no host in \"\(url)\"") }
        guard hostPart.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" }) else {
            throw bad("invalid host \"\(hostPart)\"")
        }
        guard let portPart else { return (String(hostPart), defaultPort) }
        guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = Int(portPart), (1 ... 65535).contains(port)
        else {
            throw bad("invalid port \"\(portPart)\" (1 to 65535)")
        }
        return (String(hostPart), port)
    }

    private static func bad(_ message: String) -> ClientError {
        ClientError(code: .badURL, message: message)
    }
}

extension String {
    var trimmed: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first ... last])
    }
}
