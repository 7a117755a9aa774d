/// The numbers of one fixed-rate run (or one `--max` step), as a table for
/// people or one JSON object for scripts.
struct Report {
    let pairs: Int
    let rate: Double
    let duration: Double
    let results: CallResults
    let before: ProcessSample?
    let after: ProcessSample?
    /// The database's process trees (`--db-pid`), before and after.
    var databaseBefore: ProcessTreeSample? = nil
    var databaseAfter: ProcessTreeSample? = nil

    /// Runs `run` at `rate` for `duration` seconds, sampling the servers
    /// and the database (those `meters` names) before and after.
    static func measure(_ run: CallRun, pairs: Int, rate: Double, duration: Double, meters: Meters) throws -> Report {
        let before = try meters.sampleServers()
        let databaseBefore = try meters.sampleDatabase()
        let results = run.run(rate: rate, duration: duration)
        let after = try meters.sampleServers()
        let databaseAfter = try meters.sampleDatabase()
        return Report(
            pairs: pairs, rate: rate, duration: duration, results: results, before: before, after: after,
            databaseBefore: databaseBefore, databaseAfter: databaseAfter)
    }

    /// Latency percentiles in milliseconds: p50, p90, p99, max.
    static func percentiles(_ samples: [UInt64]) -> [Double] {
        guard !samples.isEmpty else { return [0, 0, 0, 0] }
        let sorted = samples.sorted()
        return [0.50, 0.90, 0.99, 1.0].map { fraction in
            let rank = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
            return Double(sorted[max(0, rank)]) / 1e6
        }
    }

    /// Completed calls per second of load.
    var achievedRate: Double { Double(results.completed) / results.loadSeconds }

    /// The setup latency's p99 in milliseconds (0 without any completed setup).
    var setupP99Milliseconds: Double { Report.percentiles(results.setup)[2] }

    /// Server CPU per completed call in microseconds, when the server was measured.
    var serverCPUPerCall: Double? {
        guard let before, let after, results.completed > 0 else { return nil }
        return (after.cpuMicros - before.cpuMicros) / Double(results.completed)
    }

    /// Each server's CPU per completed call, when several were measured.
    var serverCPUPerCallByProcess: [Double]? {
        guard let before, let after, before.parts.count > 1, results.completed > 0 else { return nil }
        return zip(before.parts, after.parts).map { ($1 - $0) / Double(results.completed) }
    }

    /// The database's CPU per completed call in microseconds, when it was measured.
    var databaseCPUPerCall: Double? {
        guard let databaseBefore, let databaseAfter, results.completed > 0 else { return nil }
        return (databaseAfter.cpuMicros - databaseBefore.cpuMicros) / Double(results.completed)
    }

    /// Bytes the clients received and sent per completed call.
    var wireBytesPerCall: (received: Double, sent: Double)? {
        guard results.completed > 0 else { return nil }
        let calls = Double(results.completed)
        return (Double(results.wireBytes.received) / calls, Double(results.wireBytes.sent) / calls)
    }

    /// ringbench's CPU use over the load, in percent of one CPU: near 100 means it is the bottleneck.
    var clientCPUPercent: Double { results.clientCPUMicros / (results.loadSeconds * 1e4) }

    private var series: [(String, [UInt64])] {
        [("ring", results.ring), ("setup", results.setup), ("teardown", results.teardown)]
    }

    func table() -> String {
        let format = { (value: Double) in TextFormat.number(value) }
        var lines = [
            "ringbench calls: \(pairs) pairs, \(format(rate)) calls/s offered for \(format(duration)) s",
            "calls      attempted \(results.attempted)  completed \(results.completed)  failed \(results.failed)"
                + "  missed slots \(results.missedSlots)",
            "throughput \(format(achievedRate)) calls/s completed",
        ]
        for (code, count) in results.failures.sorted(by: { $0.key < $1.key }) {
            lines.append("  failed    \(code): \(count)")
        }
        if let counts = results.reconnect {
            lines.append(
                "reconnect  refused connects \(counts.refusedConnects)  reconnects \(counts.reconnects)"
                    + "  interrupted calls \(counts.interruptedCalls)  retried \(counts.retriedCalls)")
        }
        if results.failures["ERR_RATE_LIMITED"] != nil {
            lines.append("  (raise RINGD_LIMITS_REQUESTS_PER_SECOND and RINGD_LIMITS_REQUEST_BURST on the server)")
        }
        return (lines + detailLines()).joined(separator: "\n")
    }

    /// The latency percentiles, the server's CPU and RSS, ringbench's CPU and the first connection errors.
    func detailLines() -> [String] {
        var lines = ["latency ms       p50       p90       p99       max"]
        for (name, samples) in series {
            let values = Report.percentiles(samples).map { TextFormat.pad(TextFormat.number($0, digits: 3), 10) }
                .joined()
            lines.append(TextFormat.pad(name, 11, left: true) + values)
        }
        if let perCall = serverCPUPerCall, let after {
            let each =
                serverCPUPerCallByProcess.map { parts in
                    " (\(parts.count) processes: " + parts.map { TextFormat.number($0) }.joined(separator: " + ") + ")"
                } ?? ""
            lines.append(
                "server     \(TextFormat.number(perCall)) µs CPU per call\(each), RSS \(after.rssKiB / 1024) MiB"
                    + (each.isEmpty ? "" : " in all"))
        }
        if let perCall = databaseCPUPerCall, let databaseAfter {
            lines.append(
                "database   \(TextFormat.number(perCall)) µs CPU per call (\(databaseAfter.processes) processes)")
        }
        lines.append("client     \(TextFormat.number(clientCPUPercent)) % of one CPU during the load")
        if let bytes = wireBytesPerCall {
            lines.append(
                "wire       \(TextFormat.number(bytes.received, digits: 0)) bytes in, "
                    + "\(TextFormat.number(bytes.sent, digits: 0)) bytes out per call (clients' sockets)")
        }
        for error in results.connectionErrors.prefix(5) { lines.append("connection \(error)") }
        return lines
    }

    func json() -> String {
        "{" + jsonFields().joined(separator: ",") + "}"
    }

    /// The members of ``json()``, to embed in a larger object.
    func jsonFields() -> [String] {
        var fields = [
            "\"pairs\":\(pairs)", "\"rate\":\(rate)", "\"duration\":\(duration)",
            "\"attempted\":\(results.attempted)", "\"completed\":\(results.completed)", "\"failed\":\(results.failed)",
            "\"missedSlots\":\(results.missedSlots)", "\"callsPerSecond\":\(TextFormat.number(achievedRate))",
            "\"failures\":{"
                + results.failures.sorted(by: { $0.key < $1.key }).map { "\"\($0.key)\":\($0.value)" }
                .joined(separator: ",") + "}",
        ]
        for (name, samples) in series {
            let values = zip(["p50", "p90", "p99", "max"], Report.percentiles(samples))
                .map { "\"\($0)\":\(TextFormat.number($1, digits: 3))" }
            fields.append("\"\(name)Ms\":{" + values.joined(separator: ",") + "}")
        }
        if let perCall = serverCPUPerCall, let after {
            fields.append("\"serverCpuMicrosPerCall\":\(TextFormat.number(perCall))")
            fields.append("\"serverRssKiB\":\(after.rssKiB)")
        }
        if let parts = serverCPUPerCallByProcess {
            fields.append(
                "\"serverCpuMicrosPerCallByProcess\":[" + parts.map { TextFormat.number($0) }.joined(separator: ",")
                    + "]")
        }
        if let perCall = databaseCPUPerCall, let databaseAfter {
            fields.append("\"databaseCpuMicrosPerCall\":\(TextFormat.number(perCall))")
            fields.append("\"databaseProcesses\":\(databaseAfter.processes)")
        }
        fields.append("\"clientCpuPercent\":\(TextFormat.number(clientCPUPercent))")
        if let bytes = wireBytesPerCall {
            fields.append("\"wireBytesInPerCall\":\(TextFormat.number(bytes.received, digits: 0))")
            fields.append("\"wireBytesOutPerCall\":\(TextFormat.number(bytes.sent, digits: 0))")
        }
        fields.append("\"connectionErrors\":\(results.connectionErrors.count)")
        if let counts = results.reconnect {
            fields += [
                "\"refusedConnects\":\(counts.refusedConnects)", "\"reconnects\":\(counts.reconnects)",
                "\"interruptedCalls\":\(counts.interruptedCalls)", "\"retriedCalls\":\(counts.retriedCalls)",
            ]
        }
        return fields
    }
}
