/// The command line of `ringbench idle`, parsed.
struct IdleOptions {
    var server = ServerOptions()
    var connections = 1000
    /// Seconds the connections stay open, idle, once all are authenticated.
    var hold = 2.0
    /// How long connecting and authenticating every connection may take.
    var connectTimeout = 120.0

    static let usage = """
        usage: ringbench idle [--connections N] [--hold S] [--server ws[s]://HOST:PORT | --spawn PATH [--tls]]
                              [--server-pid PID] [--server-cpus LIST] [--client-cpus LIST] [--server-env K=V]...
                              [--json]

          --connections N     authenticated WebSockets to open, users idle0, idle1, … (1000);
                              against a loopback server they come from 127.0.0.2, 127.0.0.3, …
                              (at most 20,000 per source address), so ephemeral ports last
          --hold S            seconds to keep them open and idle, answering pings (2); ringd
                              pings a quiet peer every 15 s by default
        \(ServerOptions.usage)

        Reports the time to connect and authenticate all, the server's RSS before and after
        (and per connection), and its CPU during the hold. ringbench raises its descriptor
        limit to the hard limit; N must fit under it (ulimit -Hn), and under the server's.
        """

    /// Parses the arguments after `idle`.
    init(arguments list: [String]) throws(UsageError) {
        var arguments = Arguments(list)
        while let flag = arguments.next() {
            if try server.parse(flag, &arguments) { continue }
            switch flag {
            case "--connections": connections = try arguments.integer(flag, 1 ... 1_000_000)
            case "--hold": hold = try arguments.number(flag)
            default: throw UsageError("unknown option \(flag)")
            }
        }
        if server.serverPIDs.count > 1 { throw UsageError("--server-pid: ringbench idle measures one server") }
    }

    /// The descriptors the run needs: one per connection and a few of its own.
    var descriptorsNeeded: Int { connections + 64 }
}
