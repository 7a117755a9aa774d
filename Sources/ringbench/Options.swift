/// The options every `ringbench` command shares: which server, how to pin
/// and measure it, and the output format.
struct ServerOptions {
    var host = "127.0.0.1"
    var port = 8787
    var json = false
    /// The servers to measure (`--server-pid`, repeatable): their CPU is summed.
    var serverPIDs: [Int32] = []
    var spawnPath: String?
    var serverCPUs: String?
    var clientCPUs: String?
    /// Whether the clients speak TLS (`--tls`, or a `wss://` server).
    var tls = false
    /// Whether the clients offer permessage-deflate (`--compress`).
    var compress = false
    /// `KEY=VALUE` entries added to the spawned server's environment (`--server-env`), in order.
    var serverEnvironment: [String] = []

    /// The usage lines of the shared options.
    static let usage = """
          --server URL        a running ringd (default ws://127.0.0.1:8787; wss:// for TLS,
                              whose certificate is not checked: the server is measured)
          --spawn PATH        start this ringd binary on a free port with a temporary store
                              and raised limits, measure it, stop it
          --tls               with --spawn: serve TLS alone, on a generated certificate
          --compress          offer permessage-deflate (with --spawn: turn ws.compression on);
                              the server compresses messages from its threshold up
          --server-pid PID    measure this server's CPU and RSS from /proc (implied by --spawn);
                              repeatable with calls: the processes' CPU and RSS are summed
          --server-cpus LIST  pin the spawned server (taskset -c LIST)
          --server-env K=V    with --spawn: set K to V in the server's environment, replacing
                              ringbench's own setting of K (repeatable), e.g.
                              RINGD_WEBHOOKS_ENDPOINTS='[...]' or RINGD_STORE_PATH=FILE
          --client-cpus LIST  pin ringbench itself (sched_setaffinity), e.g. 0 or 0,2-3
          --json              one JSON object instead of the table
        """

    /// Takes `flag` (and its value) when it is a shared option; false when it is not one.
    mutating func parse(_ flag: String, _ arguments: inout Arguments) throws(UsageError) -> Bool {
        switch flag {
        case "--server": try parseServer(try arguments.value(flag))
        case "--json": json = true
        case "--tls": tls = true
        case "--compress": compress = true
        case "--server-pid": serverPIDs.append(try arguments.pid(flag))
        case "--spawn": spawnPath = try arguments.value(flag)
        case "--server-cpus": serverCPUs = try arguments.value(flag)
        case "--server-env":
            let entry = try arguments.value(flag)
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw UsageError("--server-env needs KEY=VALUE: \(entry)")
            }
            serverEnvironment.append(entry)
        case "--client-cpus": clientCPUs = try arguments.value(flag)
        default: return false
        }
        return true
    }

    /// Sets host, port and TLS from `ws://HOST:PORT` or `wss://HOST:PORT`.
    mutating func parseServer(_ url: String) throws(UsageError) {
        let endpoint = try ServerEndpoint(url, flag: "--server")
        (host, port, tls) = (endpoint.host, endpoint.port, endpoint.tls)
    }
}

/// A server's address as `--server` or `--callee-server` gives it.
struct ServerEndpoint: Equatable {
    let host: String
    let port: Int
    let tls: Bool

    init(host: String, port: Int, tls: Bool) { (self.host, self.port, self.tls) = (host, port, tls) }

    /// From `ws://HOST:PORT` or `wss://HOST:PORT`; `flag` names the option in errors.
    init(_ url: String, flag: String) throws(UsageError) {
        guard let scheme = ["ws://", "wss://"].first(where: url.hasPrefix) else {
            throw UsageError("\(flag) must be ws://HOST:PORT or wss://HOST:PORT")
        }
        var authority = url.dropFirst(scheme.count)
        if let slash = authority.firstIndex(of: "/") { authority = authority[..<slash] }
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...])
        else {
            throw UsageError("\(flag) needs a port: \(url)")
        }
        self.init(host: String(authority[..<colon]).trimmingBrackets(), port: port, tls: scheme == "wss://")
    }

    /// The `Host` header naming it.
    var hostHeader: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The arguments still to parse, consumed flag by flag.
struct Arguments {
    private var rest: ArraySlice<String>

    init(_ arguments: [String]) { rest = arguments[...] }

    /// The next flag, or nil at the end.
    mutating func next() -> String? { rest.popFirst() }

    /// The value after `flag`.
    mutating func value(_ flag: String) throws(UsageError) -> String {
        guard let next = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
        return next
    }

    /// The positive number after `flag`.
    mutating func number(_ flag: String) throws(UsageError) -> Double {
        let text = try value(flag)
        guard let number = Double(text), number > 0, number.isFinite else {
            throw UsageError("\(flag): not a positive number: \(text)")
        }
        return number
    }

    /// The process id after `flag`.
    mutating func pid(_ flag: String) throws(UsageError) -> Int32 {
        Int32(try integer(flag, 1 ... Int(Int32.max)))
    }

    /// The whole number in `range` after `flag`.
    mutating func integer(_ flag: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
        let text = try value(flag)
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("\(flag): not a whole number from \(range.lowerBound) to \(range.upperBound): \(text)")
        }
        return number
    }
}

/// A bad command line, with the message to print above the usage.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension String {
    /// The address without the brackets an IPv6 literal wears in a URL.
    func trimmingBrackets() -> String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
