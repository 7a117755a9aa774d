/// The command line of `ringbench calls`, parsed.
struct Options {
    var host = "127.0.0.1"
    var port = 8787
    var pairs = 50
    var rate = 100.0
    var duration = 10.0
    var json = false
    var serverPID: Int32?
    var spawnPath: String?
    var serverCPUs: String?
    var clientCPUs: String?
    /// How long a call may take from initiate to the callee's `ended` before it counts as failed.
    var callTimeout = 10.0

    static let usage = """
    usage: ringbench calls [--server ws://HOST:PORT | --spawn PATH] [--pairs P] [--rate R]
                           [--duration S] [--server-pid PID] [--server-cpus LIST]
                           [--client-cpus LIST] [--json]

      --server URL        a running ringd (default ws://127.0.0.1:8787); start it with
                          RINGD_LIMITS_REQUESTS_PER_SECOND and RINGD_LIMITS_REQUEST_BURST
                          raised, or its per-connection rate limit (20/s) caps the run
      --spawn PATH        start this ringd binary on a free port with a temporary store
                          and raised rate limits, measure it, stop it
      --pairs P           caller/callee pairs, each one WebSocket per party (50)
      --rate R            calls per second, open loop, spread over the pairs (100)
      --duration S        seconds of load (10)
      --server-pid PID    report the server's CPU per call and its RSS (implied by --spawn)
      --server-cpus LIST  pin the spawned server (taskset -c LIST)
      --client-cpus LIST  pin ringbench itself (sched_setaffinity), e.g. 0 or 0,2-3
      --json              one JSON object instead of the table
    """

    /// Parses the arguments after `calls`.
    init(arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        func value(_ flag: String) throws(UsageError) -> String {
            guard let next = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
            return next
        }
        func number(_ flag: String) throws(UsageError) -> Double {
            let text = try value(flag)
            guard let number = Double(text), number > 0 else { throw UsageError("\(flag): not a positive number: \(text)") }
            return number
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--server": try parseServer(try value(flag))
            case "--pairs": pairs = Int(try number(flag))
            case "--rate": rate = try number(flag)
            case "--duration": duration = try number(flag)
            case "--json": json = true
            case "--server-pid": serverPID = Int32(try number(flag))
            case "--spawn": spawnPath = try value(flag)
            case "--server-cpus": serverCPUs = try value(flag)
            case "--client-cpus": clientCPUs = try value(flag)
            default: throw UsageError("unknown option \(flag)")
            }
        }
        guard pairs >= 1 else { throw UsageError("--pairs must be at least 1") }
    }

    mutating func parseServer(_ url: String) throws(UsageError) {
        guard url.hasPrefix("ws://") else { throw UsageError("--server must be ws://HOST:PORT") }
        var authority = url.dropFirst(5)
        if let slash = authority.firstIndex(of: "/") { authority = authority[..<slash] }
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) else {
            throw UsageError("--server needs a port: \(url)")
        }
        host = String(authority[..<colon]).trimmingBrackets()
        self.port = port
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
