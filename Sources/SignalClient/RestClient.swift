import SignalCrypto
import SignalProtocol
import SignalSystem

/// The REST API, for servers that hold an API key (`auth.apiKeys`): tokens
/// and health. Every call runs one HTTP/1.1 exchange on a fresh connection
/// (`Connection: close`) on a thread of its own.
public struct RestClient: Sendable {
    public let endpoint: ServerEndpoint
    /// The `X-Api-Key` sent with every request except ``health()``; nil sends none.
    public let apiKey: String?
    /// Seconds the connect and, separately, the whole exchange may take.
    public var timeout: Double = 10
    /// How an `https://` server's certificate is checked.
    public var tlsVerification = TLSVerification.systemRoots

    /// A client of the REST API at `endpoint` (its path is ignored).
    public init(endpoint: ServerEndpoint, apiKey: String?) {
        self.endpoint = endpoint
        self.apiKey = apiKey
    }

    /// `GET /healthz`: `status`, `version`, `uptimeSeconds`, `connections`. Needs no key.
    public func health() async throws(ClientError) -> JSONValue {
        try await exchange("GET", "/healthz", sendKey: false, expecting: 200)
    }

    /// `POST /v1/users/{uid}/tokens`: a token for `uid`, valid `ttlSeconds`
    /// (server default 24 h), and when it expires (milliseconds since the epoch).
    public func mintToken(
        uid: String, ttlSeconds: Int64? = nil
    ) async throws(ClientError) -> (token: String, expiresAt: Int64) {
        let body = ttlSeconds.map { JSONValue.object([("ttlSeconds", .integer($0))]) }
        let json = try await exchange("POST", "/v1/users/\(Self.pathSegment(uid))/tokens", body: body, expecting: 201)
        guard let token = json["authToken"]?.stringValue, let expiresAt = json["expiresAt"]?.integerValue else {
            throw .protocolViolation("the token response lacks authToken or expiresAt")
        }
        return (token, expiresAt)
    }

    /// `DELETE /v1/users/{uid}/tokens`: every token issued to `uid` so far stops working.
    public func revokeTokens(uid: String) async throws(ClientError) {
        _ = try await exchange("DELETE", "/v1/users/\(Self.pathSegment(uid))/tokens", expecting: 204)
    }

    /// `PUT /v1/users/{uid}`: sets `uid`'s profile; the user as stored.
    public func setProfile(_ profile: UserProfile, of uid: String) async throws(ClientError) -> UserRecord {
        try await record(
            try await exchange("PUT", "/v1/users/\(Self.pathSegment(uid))", body: profile.json, expecting: 200))
    }

    /// `GET /v1/users/{uid}`: `uid`'s profile and do-not-disturb (a failure
    /// with `ERR_NOT_FOUND` when neither is set).
    public func user(_ uid: String) async throws(ClientError) -> UserRecord {
        try await record(try await exchange("GET", "/v1/users/\(Self.pathSegment(uid))", expecting: 200))
    }

    private func record(_ json: JSONValue) async throws(ClientError) -> UserRecord {
        do throws(SignalError) {
            return try UserRecord(json: json)
        } catch {
            throw .protocolViolation("the user response is not a user: \(error.message)")
        }
    }

    private func exchange(
        _ method: String, _ path: String, body: JSONValue? = nil, sendKey: Bool = true,
        expecting status: Int
    ) async throws(ClientError) -> JSONValue {
        try await HTTPExchange.json(
            method, path, body: body, headers: sendKey ? apiKey.map { [("X-Api-Key", $0)] } ?? [] : [],
            to: endpoint, verification: tlsVerification, timeout: timeout, expecting: status)
    }

    /// `text` percent-encoded for one path segment (uids are already safe; this guards the rest).
    static func pathSegment(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "@"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}
