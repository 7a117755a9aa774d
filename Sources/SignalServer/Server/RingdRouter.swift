import SignalProtocol

/// The routes of `ringd`: `GET /healthz` and the WebSocket endpoint `GET /v1/ws`.
public final class RingdRouter: HTTPRouter {
    private var table = RouteTable()

    /// A router for one loop of a server.
    public init(context: ServerContext) {
        let stats = context.stats
        table.add("GET", "/healthz") { _ in
            .respond(.json(.ok, .object([
                ("status", .string("ok")),
                ("version", .string(RingdVersion.current)),
                ("uptimeSeconds", .integer(Int64(stats.uptimeSeconds))),
                ("connections", .integer(Int64(stats.openConnections))),
            ])))
        }
        table.add("GET", "/v1/ws") { _ in .webSocket(SignalingPlaceholder()) }
    }

    public func route(_ request: HTTPRequest) -> HTTPRoute {
        table.route(request)
    }
}

/// Holds `/v1/ws` connections open until the ringing protocol serves them;
/// messages are accepted and ignored.
final class SignalingPlaceholder: WebSocketResponder {
    func webSocketDidOpen(_ socket: WebSocket) {}
    func webSocket(_ socket: WebSocket, didReceive message: WebSocketMessage) {}
    func webSocketDidClose(_ socket: WebSocket, code: WebSocketCloseCode) {}
}
