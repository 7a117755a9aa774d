import SignalCrypto
import SignalProtocol

/// Time-limited TURN credentials in the form coturn's `use-auth-secret`
/// checks (the TURN REST API draft, draft-uberti-behave-turn-rest): the
/// username is `<expiry in Unix seconds>:<uid>`, the password the base64
/// HMAC-SHA1 of the username under the shared secret. The TURN server
/// needs no call to ringd: it recomputes the HMAC and checks the expiry.
enum TURNCredentials {
    /// The username and password for `uid`, valid until `expiry` (Unix seconds).
    static func mint(
        uid: String, expiry: Int64, secret: String
    ) throws(CryptoError) -> (username: String, credential: String) {
        let username = "\(expiry):\(uid)"
        let mac = try Crypto.hmacSHA1(key: Array(secret.utf8), message: Array(username.utf8))
        return (username, Base64.encode(mac))
    }

    /// The configured servers for `uid` at `now` (ms since the Unix epoch),
    /// TURN entries without a username given fresh credentials.
    static func iceServers(for uid: String, now: Int64, settings: WebRTCSettings) throws(CryptoError) -> IceServerList {
        guard let secret = settings.turnSecret else {
            return IceServerList(iceServers: settings.iceServers, expiresAt: nil)
        }
        let expiry = now / 1000 + Int64(settings.turnCredentialSeconds)
        var minted = false
        var servers: [IceServer] = []
        for var server in settings.iceServers {
            if server.isTURN && server.username == nil {
                let credentials = try mint(uid: uid, expiry: expiry, secret: secret)
                server.username = credentials.username
                server.credential = credentials.credential
                minted = true
            }
            servers.append(server)
        }
        return IceServerList(iceServers: servers, expiresAt: minted ? expiry * 1000 : nil)
    }
}
