import SignalProtocol
import SignalSystem

/// One info line per REST request once it is answered: method, path (the
/// query left out: it may hold a cursor, never worth a line), status and
/// milliseconds, as fields too. Probes and scrapes go at debug, since an
/// orchestrator asks every few seconds; refusals (4xx, 5xx) at most
/// ``LogThrottle/burst`` a minute per status, with a count of the rest.
/// Never a header: the API key and bearer tokens travel there.
enum AccessLog {
    static let quietPaths: Set<String> = ["/healthz", "/readyz", "/metrics"]

    /// `route` with its answer logged; a WebSocket upgrade is not a REST
    /// request (the signaling session logs what matters of it).
    static func logging(_ route: HTTPRoute, for request: HTTPRequest) -> HTTPRoute {
        let started = Deadline.now(), method = request.method, path = request.path
        switch route {
        case .respond(let response):
            log(method, path, response.status.code, since: started)
            return route
        case .later(let answer):
            return .later { sink in answer(sink.observing { log(method, path, $0.status.code, since: started) }) }
        case .webSocket:
            return route
        }
    }

    private static func log(_ method: String, _ path: String, _ status: Int, since started: Deadline) {
        let level: Log.Level = quietPaths.contains(path) ? .debug : .info
        guard Log.isEnabled(level) else { return }
        let milliseconds = (Deadline.now().seconds(since: started) * 1000 * 10).rounded() / 10
        let fields: Log.Fields = [
            ("method", method), ("path", path), ("status", String(status)), ("ms", String(milliseconds)),
        ]
        // The fields say it all: text reads `request method=GET path=… status=200 ms=0.4`.
        // A client can make refusals as fast as it likes: those are throttled per status.
        if status >= 400 {
            Log.repeated(level, "request-\(status)", "request", fields)
        } else if level == .debug {
            Log.debug("request", fields)
        } else {
            Log.info("request", fields)
        }
    }
}
