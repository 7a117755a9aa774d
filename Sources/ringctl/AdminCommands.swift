import SignalClient
import SignalProtocol

/// `ringctl token`, `ringctl revoke` and `ringctl status`: one request each
/// (REST, plus the WebSocket for the active call), then exit.
enum AdminCommands {
    /// Mints a token for `uid` through the REST API; prints the token, and on a
    /// terminal its expiry (so that `$(ringctl token bob)` is just the token).
    static func token(uid: String, ttlSeconds: Int?, settings: Settings, console: Console) async throws(Failure) {
        let minted = try await settings.rest { rest throws(ClientError) in
            try await rest.mintToken(uid: uid, ttlSeconds: ttlSeconds.map(Int64.init))
        }.answer
        console.report(
            minted.token, event: "token",
            [
                ("uid", .string(uid)), ("token", .string(minted.token)),
                ("expiresAt", .integer(minted.expiresAt)),
            ])
        if console.isTerminal { console.say("expires \(TimeText.local(milliseconds: minted.expiresAt))") }
    }

    /// Revokes every token issued to `uid` so far.
    static func revoke(uid: String, settings: Settings, console: Console) async throws(Failure) {
        _ = try await settings.rest { rest throws(ClientError) in try await rest.revokeTokens(uid: uid) }
        console.report(
            "revoked every token of \(uid) (open connections stay open)", event: "revoked",
            [("uid", .string(uid))])
    }

    /// Prints the server's health and, when a user is given, that user's active call.
    static func status(settings: Settings, console: Console) async throws(Failure) {
        let (health, endpoint) = try await settings.rest { rest throws(ClientError) in try await rest.health() }
        console.report(
            healthLine(health, server: endpoint.webSocketURL), event: "health",
            [("health", health), ("server", .string(endpoint.webSocketURL))])
        guard let credentials = settings.credentials else { return }
        let client = try await settings.connect(as: credentials, reconnect: false)
        let call: Call?
        do throws(ClientError) {
            call = try await client.getActiveCall()
        } catch {
            await client.close()
            throw Failure(error, server: settings.server)
        }
        await client.close()
        console.report(
            activeCallLine(call, uid: client.uid), event: "activeCall",
            [("uid", .string(client.uid)), ("call", call?.json ?? .null)])
    }

    /// `ringd 0.1.0 at ws://… · ok · up 3 s · 1 connection`, at the server that answered.
    private static func healthLine(_ health: JSONValue, server: String) -> String {
        let version = health["version"]?.stringValue ?? "?"
        let status = health["status"]?.stringValue ?? "?"
        let uptime =
            health["uptimeSeconds"]?.integerValue.map {
                $0 < 60 ? "\($0) s" : TimeText.duration(milliseconds: $0 * 1000)
            } ?? "?"
        let connections = health["connections"]?.integerValue ?? 0
        return
            "ringd \(version) at \(server) · \(status) · up \(uptime) · \(connections) connection\(connections == 1 ? "" : "s")"
    }

    /// `bob: no active call`, or the call with its status and session.
    private static func activeCallLine(_ call: Call?, uid: String) -> String {
        guard let call else { return "\(uid): no active call" }
        let state = call.status == .initiated ? "ringing" : "connected"
        let direction = call.initiator == uid ? "to" : "from"
        return
            "\(uid): \(call.callType.rawValue) call \(direction) \(call.otherParty(of: uid)) · \(state) · session \(call.sessionId)"
    }
}
