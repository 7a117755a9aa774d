/// What a request gets.
public enum HTTPRoute {
    /// Answer with this response.
    case respond(HTTPResponse)
    /// Complete the WebSocket handshake (or answer why it fails) and hand the
    /// connection to this responder.
    case webSocket(WebSocketResponder)
}

/// Decides what each request gets. One router per event loop, called on
/// that loop's thread only.
public protocol HTTPRouter: AnyObject {
    /// The route for `request`.
    func route(_ request: HTTPRequest) -> HTTPRoute
}

/// A table of exact paths and methods that answers 404 for unknown paths and
/// 405 (with `Allow`) for known paths with another method.
public struct RouteTable {
    private var routes: [String: [(method: String, handler: (HTTPRequest) -> HTTPRoute)]] = [:]

    /// An empty table.
    public init() {}

    /// Routes `method` on `path` to `handler`.
    public mutating func add(_ method: String, _ path: String, _ handler: @escaping (HTTPRequest) -> HTTPRoute) {
        routes[path, default: []].append((method, handler))
    }

    /// The route for `request`.
    public func route(_ request: HTTPRequest) -> HTTPRoute {
        guard let handlers = routes[request.path] else {
            return .respond(.error(.notFound, "no resource at \(request.path)"))
        }
        guard let match = handlers.first(where: { $0.method == request.method }) else {
            let allowed = handlers.map(\.method).joined(separator: ", ")
            return .respond(.error(.methodNotAllowed, "\(request.path) allows \(allowed)",
                                   headers: HTTPHeaders([("Allow", allowed)])))
        }
        return match.handler(request)
    }
}
