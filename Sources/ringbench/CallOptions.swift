/// The command line of `ringbench calls`, parsed.
struct CallOptions {
    var server = ServerOptions()
    var pairs = 50
    var rate = 100.0
    var duration = 10.0
    /// Search for the highest rate that passes (`--max`) instead of one fixed-rate run.
    var max = false
    /// A `--max` step passes only with setup p99 under this, in milliseconds.
    var maxP99Milliseconds = 50.0
    /// Seconds of load per `--max` step.
    var stepDuration = 3.0
    /// How long a call may take from initiate to the callee's `ended` before it counts as failed.
    var callTimeout = 10.0
    /// Reconnect parties whose connection drops and place interrupted calls again (`--reconnect`).
    var reconnect = false
    /// Where the callees connect (`--callee-server`), when not to the callers' server: another node of a cluster.
    var calleeServer: ServerEndpoint?
    /// Processes whose CPU, with every descendant's, is the database's (`--db-pid`, repeatable).
    var databasePIDs: [Int32] = []

    /// Pairs `--max` uses when `--pairs` is not given: enough for about 6,600 calls/s at the default p99 bound.
    static let maxSearchPairs = 1000
    /// The rate `--max` starts from when `--rate` is not given.
    static let maxSearchStartRate = 500.0

    static let usage = """
        usage: ringbench calls [--server ws[s]://HOST:PORT | --spawn PATH [--tls]] [--pairs P] [--rate R]
                               [--duration S] [--max [--max-p99-ms MS] [--step-duration S] | --reconnect]
                               [--server-pid PID]... [--server-cpus LIST] [--client-cpus LIST] [--server-env K=V]...
                               [--callee-server ws[s]://HOST:PORT] [--db-pid PID]... [--json]

          --pairs P           caller/callee pairs, each one WebSocket per party (50; 1000 with --max)
          --rate R            calls per second, open loop, spread over the pairs (100);
                              with --max the rate the search starts from (500)
          --duration S        seconds of load (10)
          --max               step the rate up (x1.5 while a step passes), then bisect between the
                              last passing and the first failing rate; at most 10 steps. A step
                              passes with no failed call, no missed slot and setup p99 under
                              --max-p99-ms. Reports every step and the highest passing rate.
                              At most one call per pair is in flight, so the search offers at
                              most P / (3 x max-p99) calls/s: raise --pairs if it says so.
          --max-p99-ms MS     setup p99 bound of a passing step, in milliseconds (50)
          --step-duration S   seconds of load per step (3)
          --reconnect         keep calling across server restarts: a party whose connection drops
                              or whose connect fails connects again as the same user and device
                              (at once, then after 50 ms, doubling up to 800 ms, for at most 10 s
                              from the loss; then its pair stops and its unfinished call fails as
                              ERR_BENCH_RECONNECT). Once both parties are back, the pair ends the
                              call the server kept live for them (auth's activeCall), then places
                              its interrupted call again. Adds to the report: refusedConnects
                              (connects refused, ECONNREFUSED), reconnects (connections opened
                              again), interruptedCalls (calls whose connection was lost before the
                              callee saw them end; each counted once, however many drops it met)
                              and retriedCalls (interrupted calls placed again that then completed).
                              Placing a call again is not a new attempt: each interrupted call ends
                              completed (and retried) or failed.
          --callee-server URL the callees connect here, the callers to --server: two nodes of a
                              cluster, so ring and teardown latency cross from one node to the other
                              (not with --spawn; the same scheme as --server). Give --server-pid
                              once for each node: the report sums their CPU and lists each.
          --db-pid PID        measure the database's CPU too: this process and all its descendants
                              (PostgreSQL's postmaster: its backends are its children), summed
                              from /proc before and after the load; repeatable
        \(ServerOptions.usage)

        Against --server, start ringd with RINGD_LIMITS_REQUESTS_PER_SECOND and
        RINGD_LIMITS_REQUEST_BURST raised, or its per-connection rate limit (20/s) caps the run.
        """

    /// Parses the arguments after `calls`.
    init(arguments list: [String]) throws(UsageError) {
        var arguments = Arguments(list)
        var pairsGiven = false
        var rateGiven = false
        while let flag = arguments.next() {
            if try server.parse(flag, &arguments) { continue }
            switch flag {
            case "--pairs":
                pairs = try arguments.integer(flag, 1 ... 100_000)
                pairsGiven = true
            case "--rate":
                rate = try arguments.number(flag)
                rateGiven = true
            case "--duration": duration = try arguments.number(flag)
            case "--max": max = true
            case "--max-p99-ms": maxP99Milliseconds = try arguments.number(flag)
            case "--step-duration": stepDuration = try arguments.number(flag)
            case "--reconnect": reconnect = true
            case "--callee-server": calleeServer = try ServerEndpoint(try arguments.value(flag), flag: flag)
            case "--db-pid": databasePIDs.append(try arguments.pid(flag))
            default: throw UsageError("unknown option \(flag)")
            }
        }
        if let calleeServer {
            if server.spawnPath != nil {
                throw UsageError("--callee-server is for running servers (--server), not --spawn")
            }
            if calleeServer.tls != server.tls {
                throw UsageError("--callee-server and --server need the same scheme (ws:// or wss://)")
            }
        }
        if max && reconnect { throw UsageError("--reconnect is for one fixed-rate run, not --max") }
        if max && !pairsGiven { pairs = CallOptions.maxSearchPairs }
        if max && !rateGiven { rate = CallOptions.maxSearchStartRate }
    }

    /// Where the callers connect.
    var callerServer: ServerEndpoint { ServerEndpoint(host: server.host, port: server.port, tls: server.tls) }

    /// The descriptors the run needs: two per pair and a few of its own.
    var descriptorsNeeded: Int { 2 * pairs + 64 }
}
