import SignalProtocol
import SignalSystem

/// The routes of `ringd`: `GET /healthz`, `GET /readyz`, the WebSocket endpoint `GET /v1/ws`,
/// the REST API (``RestRoutes``), `GET /metrics` (``MetricsRoute``), the browser phone (``PhoneRoutes``), the
/// published contract (``ContractRoutes``), and with `testing.enabled` the test API (``TestRoutes``).
public final class RingdRouter: HTTPRouter {
    private var table = RouteTable()
    /// `testing.allowRemote`: the test API answers peers beyond loopback.
    private let testAPIAnswersAnyPeer: Bool

    /// A router for one loop of a server.
    init(context: ServerContext, service: SignalingService, webhooks: Webhooks? = nil, testing: TestControl? = nil) {
        let stats = context.stats
        testAPIAnswersAnyPeer = service.config.testing.allowRemote
        let signaling = service.register(context.loop)
        service.metrics.startLagProbe(on: context.loop)
        table.add("GET", "/healthz") { _, _ in .respond(stats.healthResponse) }
        table.add("GET", "/readyz") { _, _ in
            // A node that cannot serve takes no devices: balancers should send them elsewhere.
            if let reason = service.backend.unavailable, stats.isReady {
                return .respond(ServerStats.notReady(reason))
            }
            return .respond(stats.readinessResponse)
        }
        table.add("GET", "/v1/ws") { request, _ in
            if let unavailable = service.backend.unavailable {
                return .respond(.error(.serviceUnavailable, unavailable))
            }
            if let retryAfter = service.backend.overloadedRetryAfterMillis() {
                return .respond(Self.overloaded(retryAfterMillis: retryAfter))
            }
            guard let authorization = request.headers["Authorization"] else {
                return .webSocket(
                    SignalingSession(loop: signaling, headerIdentity: nil, throughProxy: request.cameThroughProxy))
            }
            guard authorization.lowercased().hasPrefix("bearer ") else {
                return .respond(.error(.unauthorized, "Authorization must be \"Bearer <token>\""))
            }
            let token = String(authorization.dropFirst("bearer ".count)).trimmingWhitespace()
            switch service.tokens.verify(token, now: service.now) {
            case .failure(let error) where error.code == .internalError:
                // The server could not check the token: not the client's fault.
                return .respond(.error(.internalServerError, error.message))
            case .failure(let error):
                return .respond(.error(.unauthorized, error.message))
            case .success(let uid):
                let deviceId = request.queryValue("deviceId")
                if let deviceId, !Identifier.isValid(deviceId) {
                    return .respond(.error(.badRequest, "deviceId must be \(Identifier.rule)"))
                }
                return .webSocket(
                    SignalingSession(
                        loop: signaling, headerIdentity: (uid, deviceId), throughProxy: request.cameThroughProxy))
            }
        }
        RestRoutes.add(to: &table, service: service)
        WebhookRoutes.add(to: &table, service: service, webhooks: webhooks)
        PushRoutes.add(to: &table, service: service)
        MediaRoutes.add(to: &table, service: service)
        UserRoutes.add(to: &table, service: service)
        ContractRoutes.add(to: &table)
        ClientRoutes.add(to: &table)
        MetricsRoute.add(to: &table, stats: stats, service: service, webhooks: webhooks)
        if service.config.webrtc.phonePage { PhoneRoutes.add(to: &table) }
        if let testing { TestRoutes.add(to: &table, control: testing) }
    }

    public func route(_ request: HTTPRequest, from peer: SocketAddress) -> HTTPRoute {
        // A reverse proxy on this host makes every peer loopback: its headers
        // say the request came from elsewhere all the same.
        if !peer.isLoopback || request.cameThroughProxy, !testAPIAnswersAnyPeer, TestRoutes.serves(request.path) {
            // As for a path that does not exist: a scan from elsewhere learns nothing.
            return AccessLog.logging(.respond(.error(.notFound, "no resource at \(request.path)")), for: request)
        }
        return AccessLog.logging(table.route(request), for: request)
    }

    /// A WebSocket upgrade refused while the node's queue is full: 503,
    /// with Retry-After in whole seconds (RFC 9110 §10.2.3), rounded up.
    static func overloaded(retryAfterMillis: Int64) -> HTTPResponse {
        .error(
            .serviceUnavailable, "the node has more queued than it can run soon; retry in \(retryAfterMillis) ms",
            headers: HTTPHeaders([("Retry-After", String((retryAfterMillis + 999) / 1000))]))
    }
}
