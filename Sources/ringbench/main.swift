#if canImport(Glibc)
    import Glibc
#endif

/// `ringbench calls` drives ringd with caller/callee pairs at a fixed rate
/// (or searches for the highest rate that passes, `--max`); `ringbench idle`
/// holds many authenticated, quiet connections and measures the server's
/// memory per connection.
enum Ringbench {
    static let usage = """
        ringbench: ringd's load generator

        \(CallOptions.usage)

        \(IdleOptions.usage)
        """

    static func main() -> Int32 {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let rest = Array(arguments.dropFirst())
        switch arguments.first {
        case "calls" where rest.contains("--help"):
            print(CallOptions.usage)
        case "calls":
            do { return runCalls(try CallOptions(arguments: rest)) } catch {
                printError("\(error.message)\n\(CallOptions.usage)")
                return 64
            }
        case "idle" where rest.contains("--help"):
            print(IdleOptions.usage)
        case "idle":
            do { return runIdle(try IdleOptions(arguments: rest)) } catch {
                printError("\(error.message)\n\(IdleOptions.usage)")
                return 64
            }
        case nil, "--help", "-h", "help":
            print(usage)
        case let command?:
            printError("unknown command \(command): use calls or idle\n\(usage)")
            return 64
        }
        return 0
    }

    private static func runCalls(_ parsed: CallOptions) -> Int32 {
        var options = parsed
        var server: SpawnedServer?
        defer { server?.stop() }
        do {
            server = try prepare(&options.server, descriptors: options.descriptorsNeeded, for: "\(options.pairs) pairs")
            let run = try CallRun(options: options)
            try run.connect()
            if options.max {
                let search = MaxSearch(options: options, run: run)
                let report = MaxReport(options: options, search: try search.search(), pairLimit: search.pairLimit)
                print(options.server.json ? report.json() : report.table())
                return report.search.best == nil ? 1 : 0
            }
            let report = try Report.measure(
                run, pairs: options.pairs, rate: options.rate, duration: options.duration,
                meters: Meters(options))
            print(options.server.json ? report.json() : report.table())
            return report.results.completed > 0 ? 0 : 1
        } catch {
            printError("\(error)")
            return 1
        }
    }

    private static func runIdle(_ parsed: IdleOptions) -> Int32 {
        var options = parsed
        var server: SpawnedServer?
        defer { server?.stop() }
        do {
            let limit = "RINGD_LIMITS_MAX_CONNECTIONS=\(max(100_000, options.connections + 1000))"
            server = try prepare(
                &options.server, descriptors: options.descriptorsNeeded,
                for: "\(options.connections) connections", overrides: [limit])
            let results = try IdleRun(options: options).measure()
            let report = IdleReport(results: results)
            print(options.server.json ? report.json() : report.table())
            return results.dropped.isEmpty ? 0 : 1
        } catch {
            printError("\(error)")
            return 1
        }
    }

    /// Pins ringbench, raises its descriptor limit to fit `descriptors`, and
    /// for `--spawn` starts the server (with `overrides`, then `--server-env`'s
    /// entries, in its environment) and points `server` at it.
    private static func prepare(
        _ server: inout ServerOptions, descriptors: Int, for what: String,
        overrides: [String] = []
    ) throws -> SpawnedServer? {
        if let cpus = server.clientCPUs { try CPUSet(cpus).pinCurrentProcess() }
        try DescriptorLimit.raise(toFit: descriptors, for: what)
        guard let path = server.spawnPath else { return nil }
        let compression = server.compress ? ["RINGD_WS_COMPRESSION=true"] : []
        // Every benchmark client comes from one address, and many connect
        // before they authenticate.
        let perAddress = [
            "RINGD_LIMITS_CONNECTIONS_PER_ADDRESS=10000000",
            "RINGD_LIMITS_MAX_UNAUTHENTICATED_CONNECTIONS=10000000",
        ]
        let spawned = try SpawnedServer(
            path: path, cpus: server.serverCPUs, tls: server.tls,
            overrides: overrides + perAddress + compression + server.serverEnvironment)
        server.serverPIDs = [spawned.pid]
        try server.parseServer(spawned.url)
        return spawned
    }
}

/// Writes `ringbench: message` and a newline to stderr.
func printError(_ message: String) {
    let line = Array("ringbench: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

exit(Ringbench.main())
