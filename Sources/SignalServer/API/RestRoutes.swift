import SignalProtocol

/// The REST API on the same port as the WebSocket endpoint, for servers (not
/// devices): every route needs an API key in `X-Api-Key`.
///
/// - `POST /v1/users/{uid}/tokens` → 201 `{"uid","authToken","expiresAt"}`
/// - `DELETE /v1/users/{uid}/tokens` → 204, revoking every token issued so far
/// - `GET /v1/users/{uid}/calls?limit&cursor&callType&callStatus&direction&with` → `{"logs","next"}`
/// - `GET /v1/calls/{sessionId}` → the call
enum RestRoutes {
    /// The default token lifetime: 24 hours.
    static let defaultTokenTTL: Int64 = 24 * 3600
    /// The longest token lifetime: one year.
    static let maxTokenTTL: Int64 = 366 * 24 * 3600

    static func add(to table: inout RouteTable, service: SignalingService) {
        table.add("POST", "/v1/users/{uid}/tokens") { request, parameters in
            authorized(request, service) { mintToken(request, uid: parameters["uid"] ?? "", service) }
        }
        table.add("DELETE", "/v1/users/{uid}/tokens") { request, parameters in
            authorized(request, service) { revokeTokens(uid: parameters["uid"] ?? "", service) }
        }
        table.add("GET", "/v1/users/{uid}/calls") { request, parameters in
            authorized(request, service) { callLogs(request, uid: parameters["uid"] ?? "", service) }
        }
        table.add("GET", "/v1/calls/{sessionId}") { request, parameters in
            authorized(request, service) { call(sessionId: parameters["sessionId"] ?? "", service) }
        }
    }

    /// A refusal of a route that shares the protocol's rules: 400 for the
    /// client's mistakes (`ERR_VALIDATION`), 500 for the server's, the
    /// protocol's code either way, as the WebSocket would answer.
    static func response(_ error: SignalError) -> HTTPResponse {
        .error(error.code == .validation ? .badRequest : .internalServerError, error)
    }

    static func authorized(
        _ request: HTTPRequest, _ service: SignalingService,
        _ route: () -> HTTPRoute
    ) -> HTTPRoute {
        guard let key = request.headers["X-Api-Key"] else {
            return .respond(.error(.unauthorized, "send an API key in the X-Api-Key header"))
        }
        guard service.keys.isAPIKey(key) else { return .respond(.error(.unauthorized, "unknown API key")) }
        if let refusal = service.keys.refusal(of: key, throughProxy: request.cameThroughProxy) {
            return .respond(.error(.unauthorized, refusal))
        }
        if let wait = service.restLimits.refusal(for: key) {
            // Retry-After counts whole seconds (RFC 9110 §10.2.3): rounded up.
            let seconds = (wait + 999) / 1000
            return .respond(
                .error(
                    .tooManyRequests, "over limits.restRequestsPerSecond for this API key; retry in \(wait) ms",
                    headers: HTTPHeaders([("Retry-After", String(seconds))])))
        }
        return route()
    }

    private static func invalidUID(_ uid: String) -> HTTPRoute? {
        Identifier.isValid(uid)
            ? nil
            : .respond(.error(.badRequest, "uid must be \(Identifier.rule)"))
    }

    private static func mintToken(_ request: HTTPRequest, uid: String, _ service: SignalingService) -> HTTPRoute {
        if let invalid = invalidUID(uid) { return invalid }
        var ttl = defaultTokenTTL
        if !request.body.isEmpty {
            guard let body = try? JSONValue.parse(request.body), body.objectMembers != nil else {
                return .respond(.error(.badRequest, "the body must be a JSON object"))
            }
            if let value = body["ttlSeconds"] {
                guard let seconds = value.integerValue, (1 ... maxTokenTTL).contains(seconds) else {
                    return .respond(.error(.badRequest, "ttlSeconds must be an integer from 1 to \(maxTokenTTL)"))
                }
                ttl = seconds
            }
        }
        guard let minted = try? service.tokens.mint(uid: uid, ttlSeconds: ttl, now: service.now) else {
            return .respond(.error(.internalServerError, "the token could not be signed"))
        }
        return .respond(
            .json(
                .created,
                .object([
                    ("uid", .string(uid)), ("authToken", .string(minted.token)),
                    ("expiresAt", .integer(minted.expiresAt)),
                ])))
    }

    private static func revokeTokens(uid: String, _ service: SignalingService) -> HTTPRoute {
        if let invalid = invalidUID(uid) { return invalid }
        let now = service.now
        return .later { sink in
            service.revokeTokens(uid: uid, at: now) { result in
                switch result {
                case .success: sink.send(HTTPResponse(status: .noContent))
                case .failure(let error): sink.send(.error(.internalServerError, "the store failed: \(error.code)"))
                }
            }
        }
    }

    private static func callLogs(_ request: HTTPRequest, uid: String, _ service: SignalingService) -> HTTPRoute {
        if let invalid = invalidUID(uid) { return invalid }
        var fields: [(key: String, value: JSONValue)] = []
        for (name, value) in request.query {
            guard ["limit", "cursor", "callType", "callStatus", "direction", "with"].contains(name) else {
                return .respond(.error(.badRequest, "unknown query parameter \(name)"))
            }
            if name == "limit" {
                guard let limit = Int64(value) else { return .respond(.error(.badRequest, "limit must be an integer")) }
                fields.append((name, .integer(limit)))
            } else {
                fields.append((name, .string(value)))
            }
        }
        let filter: CallLogFilter
        do {
            filter = try ClientFrame.callLogFilter(JSONFields(.object(fields)))
        } catch {
            return .respond(.error(.badRequest, error.message))
        }
        return .later { sink in
            service.callLogs(for: uid, query: filter) { result in
                switch result {
                case .success(let page): sink.send(.json(.ok, ResultData.callLogs(page).json))
                case .failure(let error):
                    let signal = error.signalError
                    sink.send(.error(signal.code == .validation ? .badRequest : .internalServerError, signal.message))
                }
            }
        }
    }

    private static func call(sessionId: String, _ service: SignalingService) -> HTTPRoute {
        if service.backend.decidesInMemory, let live = service.liveCall(sessionId: sessionId) {
            return .respond(.json(.ok, live.json))
        }
        return .later { sink in
            service.call(sessionId: sessionId) { result in
                switch result {
                case .success(let call?): sink.send(.json(.ok, call.json))
                case .success(nil): sink.send(.error(.notFound, "no call \(sessionId)"))
                case .failure(let error): sink.send(.error(.internalServerError, "the store failed: \(error.code)"))
                }
            }
        }
    }
}
