/// The numbers of a run, as a table for people or one JSON object for scripts.
struct Report {
    let options: Options
    let results: CallResults
    let before: ProcessSample?
    let after: ProcessSample?

    /// Latency percentiles in milliseconds: p50, p90, p99, max.
    private func percentiles(_ samples: [UInt64]) -> [Double] {
        guard !samples.isEmpty else { return [0, 0, 0, 0] }
        let sorted = samples.sorted()
        return [0.50, 0.90, 0.99, 1.0].map { fraction in
            let rank = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
            return Double(sorted[max(0, rank)]) / 1e6
        }
    }

    private var achievedRate: Double { Double(results.completed) / results.loadSeconds }

    private var serverCPUPerCall: Double? {
        guard let before, let after, results.completed > 0 else { return nil }
        return (after.cpuMicros - before.cpuMicros) / Double(results.completed)
    }

    /// ringbench's CPU use over the load, in percent of one CPU: near 100 means it is the bottleneck.
    private var clientCPUPercent: Double { results.clientCPUMicros / (results.loadSeconds * 1e4) }

    private var series: [(String, [UInt64])] {
        [("ring", results.ring), ("setup", results.setup), ("teardown", results.teardown)]
    }

    func table() -> String {
        var lines = [
            "ringbench calls: \(options.pairs) pairs, \(format(options.rate)) calls/s offered for \(format(options.duration)) s",
            "calls      attempted \(results.attempted)  completed \(results.completed)  failed \(results.failed)"
                + "  missed slots \(results.missedSlots)",
            "throughput \(format(achievedRate)) calls/s completed",
        ]
        for (code, count) in results.failures.sorted(by: { $0.key < $1.key }) { lines.append("  failed    \(code): \(count)") }
        if results.failures["ERR_RATE_LIMITED"] != nil {
            lines.append("  (raise RINGD_LIMITS_REQUESTS_PER_SECOND and RINGD_LIMITS_REQUEST_BURST on the server)")
        }
        lines.append("latency ms       p50       p90       p99       max")
        for (name, samples) in series {
            let values = percentiles(samples).map { pad(format($0, digits: 3), 10) }.joined()
            lines.append(pad(name, 11, left: true) + values)
        }
        if let perCall = serverCPUPerCall, let after {
            lines.append("server     \(format(perCall)) µs CPU per call, RSS \(after.rssKiB / 1024) MiB")
        }
        lines.append("client     \(format(clientCPUPercent)) % of one CPU during the load")
        for error in results.connectionErrors.prefix(5) { lines.append("connection \(error)") }
        return lines.joined(separator: "\n")
    }

    func json() -> String {
        var fields = [
            "\"pairs\":\(options.pairs)", "\"rate\":\(options.rate)", "\"duration\":\(options.duration)",
            "\"attempted\":\(results.attempted)", "\"completed\":\(results.completed)", "\"failed\":\(results.failed)",
            "\"missedSlots\":\(results.missedSlots)", "\"callsPerSecond\":\(format(achievedRate))",
            "\"failures\":{" + results.failures.sorted(by: { $0.key < $1.key }).map { "\"\($0.key)\":\($0.value)" }
                .joined(separator: ",") + "}",
        ]
        for (name, samples) in series {
            let values = zip(["p50", "p90", "p99", "max"], percentiles(samples)).map { "\"\($0)\":\(format($1, digits: 3))" }
            fields.append("\"\(name)Ms\":{" + values.joined(separator: ",") + "}")
        }
        if let perCall = serverCPUPerCall, let after {
            fields.append("\"serverCpuMicrosPerCall\":\(format(perCall))")
            fields.append("\"serverRssKiB\":\(after.rssKiB)")
        }
        fields.append("\"clientCpuPercent\":\(format(clientCPUPercent))")
        fields.append("\"connectionErrors\":\(results.connectionErrors.count)")
        return "{" + fields.joined(separator: ",") + "}"
    }

    private func format(_ value: Double, digits: Int = 1) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        let whole = Int(rounded)
        guard digits > 0 else { return "\(whole)" }
        let fraction = Int(((rounded - Double(whole)) * scale).rounded())
        let text = String(fraction)
        return "\(whole)." + String(repeating: "0", count: digits - text.count) + text
    }

    private func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? text + padding : padding + text
    }
}
