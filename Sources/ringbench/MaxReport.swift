/// The steps and the outcome of a `--max` search, as a table or one JSON object.
struct MaxReport {
    let options: CallOptions
    let search: SearchResult
    /// The highest rate the pairs could offer (``MaxSearch/pairLimit``).
    let pairLimit: Double

    private static let widths = [5, 10, 12, 7, 7, 13, 15, 8, 13, 7]

    func table() -> String {
        let format = { (value: Double) in TextFormat.number(value) }
        let whole = { (value: Double) in TextFormat.number(value, digits: 0) }
        let bound = options.maxP99Milliseconds
        // A database column only when --db-pid measures one, so the table is otherwise as it was.
        let database = !options.databasePIDs.isEmpty
        let widths = database ? Array(MaxReport.widths.prefix(7)) + [11] + MaxReport.widths.suffix(3) : MaxReport.widths
        let withDatabase = { (cells: [String], cell: String) in
            database ? Array(cells.prefix(7)) + [cell] + cells.suffix(3) : cells
        }
        var lines = [
            "ringbench calls --max: \(options.pairs) pairs, \(format(options.stepDuration)) s steps from "
                + "\(whole(options.rate.rounded())) calls/s; a step passes with no failed call, no missed slot "
                + "and setup p99 < \(TextFormat.number(bound, digits: bound == bound.rounded() ? 0 : 3)) ms",
            TextFormat.row(
                withDatabase(
                    [
                        "step", "offered/s", "completed/s", "failed", "missed", "setup p99 ms",
                        "server µs/call", "RSS MiB", "client CPU %", "result",
                    ], "db µs/call"), widths),
        ]
        for (index, step) in search.steps.enumerated() {
            let report = step.report
            lines.append(
                TextFormat.row(
                    withDatabase(
                        [
                            "\(index + 1)", whole(report.rate), format(report.achievedRate), "\(report.results.failed)",
                            "\(report.results.missedSlots)", TextFormat.number(report.setupP99Milliseconds, digits: 3),
                            report.serverCPUPerCall.map(format) ?? "-",
                            report.after.map { "\($0.rssKiB / 1024)" } ?? "-",
                            format(report.clientCPUPercent), step.passed ? "pass" : "fail",
                        ], report.databaseCPUPerCall.map(format) ?? "-"), widths))
        }
        guard let best = search.best else {
            lines.append(
                "max        none: no step passed (the lowest rate tried was "
                    + "\(whole(search.steps.map(\.report.rate).min() ?? options.rate)) calls/s)")
            for step in search.steps.suffix(1) { lines += step.report.detailLines() }
            return lines.joined(separator: "\n")
        }
        let report = search.steps[best].report
        lines.append(
            "max        \(whole(report.rate)) calls/s (step \(best + 1)): "
                + "\(report.results.completed) calls in \(format(report.duration)) s")
        if search.limitedByPairs {
            lines.append(
                "           limited by --pairs \(options.pairs), which offer at most \(whole(pairLimit)) calls/s "
                    + "at this p99 bound: raise --pairs to search higher")
        }
        var failures: [String: Int] = [:]
        for step in search.steps { failures.merge(step.report.results.failures, uniquingKeysWith: +) }
        for (code, count) in failures.sorted(by: { $0.key < $1.key }) {
            lines.append("  failed in all steps \(code): \(count)")
        }
        lines += report.detailLines()
        if let half = search.half {
            let ring: String = Report.percentiles(half.results.ring).map { TextFormat.number($0, digits: 3) }
                .joined(separator: "/")
            var cpu: String = half.serverCPUPerCall.map { "\(format($0)) µs CPU/call" } ?? "server CPU unknown"
            if let database = half.databaseCPUPerCall { cpu += ", database \(format(database)) µs CPU/call" }
            let counts = "\(half.results.completed) completed, \(half.results.failed) failed"
            lines.append(
                "half max   \(whole(half.rate)) calls/s for \(format(half.duration)) s: \(counts), "
                    + "ring p50/p90/p99/max \(ring) ms, \(cpu)")
        }
        return lines.joined(separator: "\n")
    }

    func json() -> String {
        let steps = search.steps.map { step in
            "{" + (step.report.jsonFields() + ["\"passed\":\(step.passed)"]).joined(separator: ",") + "}"
        }
        let best = search.best.map { search.steps[$0].report.rate }
        let half: String = search.half.map { "{" + $0.jsonFields().joined(separator: ",") + "}" } ?? "null"
        let fields: [String] = [
            "\"pairs\":\(options.pairs)", "\"startRate\":\(options.rate)", "\"stepDuration\":\(options.stepDuration)",
            "\"maxP99Ms\":\(options.maxP99Milliseconds)", "\"pairLimit\":\(pairLimit)",
            "\"limitedByPairs\":\(search.limitedByPairs)",
            "\"maxRate\":" + (best.map { "\($0)" } ?? "null"),
            "\"maxStep\":" + (search.best.map { "\($0 + 1)" } ?? "null"),
            "\"steps\":[" + steps.joined(separator: ",") + "]",
            "\"half\":" + half,
        ]
        return "{" + fields.joined(separator: ",") + "}"
    }
}
