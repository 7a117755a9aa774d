#if canImport(Glibc)
import Glibc
#endif

/// `ringbench calls`: drives ringd with caller/callee pairs and reports
/// throughput, latency and, given the server's pid, its CPU per call.
enum Ringbench {
    static func main() -> Int32 {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.first == "calls", !arguments.contains("--help") else {
            print(Options.usage)
            return arguments.isEmpty || arguments.contains("--help") ? 0 : 64
        }
        var options: Options
        do { options = try Options(arguments: Array(arguments.dropFirst())) } catch {
            printError("\(error.message)\n\(Options.usage)")
            return 64
        }
        var server: SpawnedServer?
        defer { server?.stop() }
        do {
            if let cpus = options.clientCPUs { try CPUSet(cpus).pinCurrentProcess() }
            if let path = options.spawnPath {
                let spawned = try SpawnedServer(path: path, cpus: options.serverCPUs)
                server = spawned
                options.serverPID = spawned.pid
                try options.parseServer(spawned.url)
            }
            let run = try CallRun(options: options)
            try run.connect()
            let before = try options.serverPID.map { try ProcessSample(pid: $0) }
            run.run()
            let after = try options.serverPID.map { try ProcessSample(pid: $0) }
            let report = Report(options: options, results: run.results, before: before, after: after)
            print(options.json ? report.json() : report.table())
            return run.results.completed > 0 ? 0 : 1
        } catch {
            printError("\(error)")
            return 1
        }
    }
}

/// Writes `ringbench: message` and a newline to stderr.
func printError(_ message: String) {
    let line = Array("ringbench: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

exit(Ringbench.main())
