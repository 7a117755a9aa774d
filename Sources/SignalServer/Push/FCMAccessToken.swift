import SignalCore
import SignalCrypto
import SignalProtocol
import SignalSystem

/// A Google service account's JSON key, as FCM HTTP v1 needs it.
struct FCMServiceAccount: Sendable {
    var projectId: String
    var clientEmail: String
    var key: SigningKey
    var tokenURI: String

    /// Reads `settings.serviceAccountFile`; `tokenURL` replaces its `token_uri`.
    init(settings: FCMSettings) throws(PushError) {
        guard let path = settings.serviceAccountFile else {
            throw PushError(.configuration, "push.fcm.serviceAccountFile is not set")
        }
        let what = "the FCM service account's private key"
        if let refusal = SecretFileMode.refusal("push.fcm.serviceAccountFile", path, holding: what) {
            throw PushError(.configuration, refusal)
        }
        guard let bytes = FileContents.read(path), let json = try? JSONValue.parse(bytes) else {
            throw PushError(.configuration, "push.fcm.serviceAccountFile \(path): cannot read it as JSON")
        }
        func member(_ name: String) throws(PushError) -> String {
            guard let value = json[name]?.stringValue, !value.isEmpty else {
                throw PushError(.configuration, "push.fcm.serviceAccountFile \(path): \(name) is missing")
            }
            return value
        }
        projectId = try member("project_id")
        clientEmail = try member("client_email")
        let pem = try member("private_key")
        if let tokenURL = settings.tokenURL {
            tokenURI = tokenURL
        } else {
            tokenURI = try member("token_uri")
        }
        do throws(CryptoError) {
            key = try SigningKey(pem: pem)
        } catch {
            throw PushError(.configuration, "push.fcm.serviceAccountFile \(path): private_key: \(error)")
        }
        guard key.algorithm == .rs256 else {
            throw PushError(.configuration, "push.fcm.serviceAccountFile \(path): private_key is not an RSA key")
        }
    }
}

/// The OAuth 2.0 access token FCM requests carry, from the JWT-bearer
/// grant (RFC 7523): an RS256 assertion signed with the service account's
/// key is exchanged at `token_uri`. One exchange at a time; requests that
/// need a token meanwhile wait for it. A token is used until a minute
/// before it expires, or until FCM refuses it. Used on the push worker's
/// queue only.
final class FCMAccessToken {
    typealias Waiter = (Result<String, PushError>) -> Void

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// `urn:ietf:params:oauth:grant-type:jwt-bearer`, form-encoded.
    static let encodedGrantType = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
    /// Renew this long before the token expires (ms), or half its
    /// lifetime before for a short-lived one.
    static let renewAhead: Int64 = 60_000
    /// The assertion's lifetime (Google accepts at most an hour).
    static let assertionSeconds: Int64 = 3600

    let account: FCMServiceAccount
    private let caFile: String?
    private let timeout: Double
    private var token: (value: String, obtainedAt: Int64, expiresAt: Int64)?
    private var waiters: [Waiter] = []

    init(account: FCMServiceAccount, caFile: String?, timeout: Double) {
        self.account = account
        self.caFile = caFile
        self.timeout = timeout
    }

    /// Calls `use` with a valid token, at once when there is one; otherwise
    /// once `exchange` (which must call back on this queue) has got one.
    func withToken(
        now: Int64, exchange: (OutboundRequest, @escaping (OutboundResponse) -> Void) -> Void,
        _ use: @escaping Waiter
    ) {
        if let token, now < token.expiresAt - min(Self.renewAhead, (token.expiresAt - token.obtainedAt) / 2) {
            return use(.success(token.value))
        }
        waiters.append(use)
        guard waiters.count == 1 else { return }
        let request: OutboundRequest
        do throws(PushError) {
            request = try grantRequest(now: now)
        } catch {
            return finish(.failure(error), now: now)
        }
        exchange(request) { [self] response in finish(Self.parse(response), now: now) }
    }

    /// FCM refused `refused`: the next request gets a new one.
    func invalidate(_ refused: String?) {
        if token?.value == refused || refused == nil { token = nil }
    }

    /// The POST to `token_uri`.
    func grantRequest(now: Int64) throws(PushError) -> OutboundRequest {
        let issuedAt = now / 1000
        let claims: JSONValue = .object([
            ("iss", .string(account.clientEmail)),
            ("scope", .string(Self.scope)),
            ("aud", .string(account.tokenURI)),
            ("iat", .integer(issuedAt)),
            ("exp", .integer(issuedAt + Self.assertionSeconds)),
        ])
        let assertion: String
        do throws(CryptoError) {
            assertion = try JSONWebToken.sign(claims: claims, keyId: nil, key: account.key)
        } catch {
            throw PushError(.credentials, "signing the FCM OAuth assertion: \(error)")
        }
        // The assertion is base64url, safe in a form as it is.
        let body = "grant_type=" + Self.encodedGrantType + "&assertion=" + assertion
        return OutboundRequest(
            url: account.tokenURI, headers: [("content-type", "application/x-www-form-urlencoded")],
            body: Array(body.utf8), timeout: timeout, caFile: caFile)
    }

    /// Expiry is counted from when the exchange started, so a slow answer
    /// errs on the early side.
    private func finish(_ result: Result<(String, Int64), PushError>, now: Int64) {
        let outcome = result.map { value, lifetime in
            token = (value, now, now + lifetime * 1000)
            return value
        }
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter(outcome) }
    }

    /// The token and its lifetime (seconds) from the exchange's answer.
    static func parse(_ response: OutboundResponse) -> Result<(String, Int64), PushError> {
        if let error = response.error {
            return .failure(PushError(.credentials, "the OAuth token exchange failed: \(error)"))
        }
        let json = try? JSONValue.parse(response.body)
        guard response.status == 200, let token = json?["access_token"]?.stringValue, !token.isEmpty else {
            let detail = json?["error_description"]?.stringValue ?? json?["error"]?.stringValue ?? response.bodyText
            return .failure(
                PushError(.credentials, "the OAuth token exchange answered \(response.status ?? 0): \(detail)"))
        }
        // Google grants an hour; anything outside a minute to a day is not believed.
        return .success((token, min(86_400, max(60, json?["expires_in"]?.integerValue ?? 3600))))
    }
}
