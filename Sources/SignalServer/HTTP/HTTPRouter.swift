import SignalProtocol
import SignalReactor
import SignalSystem

/// What a request gets.
public enum HTTPRoute {
    case respond(HTTPResponse)
    /// Complete the WebSocket handshake (or answer why it fails) and hand the
    /// connection to this responder.
    case webSocket(WebSocketResponder)
    /// Answer later, from any thread, through the sink (for work that must
    /// not run on the loop, such as a store query). Further requests on the
    /// connection wait for this response.
    case later(@Sendable (HTTPResponseSink) -> Void)
}

/// Where a deferred response goes: back to the connection's loop, which
/// writes it if the connection is still open.
public struct HTTPResponseSink: Sendable {
    let mailbox: LoopMailbox
    let handler: LoopBound<HTTPConnectionHandler>
    /// Sees each response sent (an access log), on the sender's thread.
    var tap: (@Sendable (HTTPResponse) -> Void)?

    init(mailbox: LoopMailbox, handler: LoopBound<HTTPConnectionHandler>) {
        self.mailbox = mailbox
        self.handler = handler
    }

    /// The same sink, with `tap` seeing each response sent through it.
    public func observing(_ tap: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponseSink {
        var sink = self
        let earlier = self.tap
        sink.tap = { response in
            earlier?(response)
            tap(response)
        }
        return sink
    }

    /// Sends the response (once; from any thread).
    public func send(_ response: HTTPResponse) {
        tap?(response)
        let handler = self.handler
        mailbox.submit { loop in handler.value(on: loop)?.finishDeferred(response) }
    }
}

/// Decides what each request gets. One router per event loop, called on
/// that loop's thread only.
public protocol HTTPRouter: AnyObject {
    /// What `request`, from the connection's `peer`, gets.
    func route(_ request: HTTPRequest, from peer: SocketAddress) -> HTTPRoute
}

/// The parameters a path pattern captured: `{uid}` in `/v1/users/{uid}` gives `["uid": …]`.
public typealias PathParameters = [String: String]

/// A table of path patterns and methods that answers 404 for unknown paths
/// and 405 (with `Allow`) for known paths with another method. A pattern
/// segment `{name}` matches any one non-empty segment (percent-decoded).
public struct RouteTable {
    /// One path pattern and its handlers by method.
    private struct Entry {
        let segments: [Substring]
        var handlers: [(method: String, handler: (HTTPRequest, PathParameters) -> HTTPRoute)]

        /// The captured parameters when `path` matches this pattern.
        func match(_ path: [Substring]) -> PathParameters? {
            guard path.count == segments.count else { return nil }
            var parameters: PathParameters = [:]
            for (pattern, segment) in zip(segments, path) {
                if pattern.hasPrefix("{") && pattern.hasSuffix("}") {
                    guard !segment.isEmpty else { return nil }
                    parameters[String(pattern.dropFirst().dropLast())] = HTTPRequest.percentDecode(
                        segment, plusIsSpace: false)
                } else if pattern != segment {
                    return nil
                }
            }
            return parameters
        }
    }

    private var entries: [Entry] = []

    public init() {}

    /// Routes `method` on paths matching `pattern` to `handler`.
    public mutating func add(
        _ method: String, _ pattern: String,
        _ handler: @escaping (HTTPRequest, PathParameters) -> HTTPRoute
    ) {
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: false)
        if let index = entries.firstIndex(where: { $0.segments == segments }) {
            entries[index].handlers.append((method, handler))
        } else {
            entries.append(Entry(segments: segments, handlers: [(method, handler)]))
        }
    }

    public func route(_ request: HTTPRequest) -> HTTPRoute {
        let path = request.path.split(separator: "/", omittingEmptySubsequences: false)
        guard
            let (entry, parameters) = entries.lazy.compactMap({ entry in entry.match(path).map { (entry, $0) } }).first
        else {
            return .respond(.error(.notFound, "no resource at \(request.path)"))
        }
        guard let match = entry.handlers.first(where: { $0.method == request.method }) else {
            let allowed = entry.handlers.map(\.method).joined(separator: ", ")
            return .respond(
                .error(
                    .methodNotAllowed, "\(request.path) allows \(allowed)",
                    headers: HTTPHeaders([("Allow", allowed)])))
        }
        return match.handler(request, parameters)
    }
}
