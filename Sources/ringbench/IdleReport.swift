/// The numbers of an idle run, as a table or one JSON object.
struct IdleReport {
    let results: IdleResults

    /// The server's RSS growth per connection in bytes, when it was measured.
    var rssPerConnection: Double? {
        guard let before = results.beforeConnect, let after = results.afterConnect, results.connections > 0 else {
            return nil
        }
        return Double(after.rssKiB - before.rssKiB) * 1024 / Double(results.connections)
    }

    /// The server's CPU time per connection while they connected (TCP accept,
    /// TLS handshake, upgrade, auth) in microseconds, when it was measured.
    var setupCPUMicrosPerConnection: Double? {
        guard let before = results.beforeConnect, let after = results.afterConnect, results.connections > 0 else {
            return nil
        }
        return (after.cpuMicros - before.cpuMicros) / Double(results.connections)
    }

    /// The server's CPU time during the hold in microseconds, when it was measured.
    var holdCPUMicros: Double? {
        guard let before = results.afterConnect, let after = results.afterHold else { return nil }
        return after.cpuMicros - before.cpuMicros
    }

    private var holdCPUPercent: Double? { holdCPUMicros.map { $0 / (results.holdSeconds * 1e4) } }

    private var connectRate: Double { Double(results.connections) / results.connectSeconds }

    func table() -> String {
        let format = { (value: Double) in TextFormat.number(value) }
        let from = results.sources.isEmpty ? "" : " from " + results.sources.joined(separator: ", ")
        var lines = [
            "ringbench idle: \(results.connections) authenticated WebSockets\(from), held \(format(results.holdSeconds)) s"
        ]
        func row(_ name: String, _ value: String) { lines.append(TextFormat.pad(name, 26, left: true) + value) }
        row(
            "connect + authenticate",
            "\(TextFormat.number(results.connectSeconds, digits: 2)) s (\(format(connectRate)) per second)")
        if let before = results.beforeConnect, let after = results.afterConnect, let hold = results.afterHold,
            let perConnection = rssPerConnection
        {
            row("server RSS before", mebibytes(before.rssKiB))
            row("server RSS authenticated", mebibytes(after.rssKiB) + " (+\(mebibytes(after.rssKiB - before.rssKiB)))")
            row(
                "RSS per connection",
                "\(TextFormat.number(perConnection, digits: 0)) bytes "
                    + "(\(TextFormat.number(perConnection / 1024, digits: 2)) KiB)")
            row("server RSS after hold", mebibytes(hold.rssKiB))
            if let setup = setupCPUMicrosPerConnection {
                row("server CPU per connect", "\(format(setup)) µs (accept, handshakes, auth)")
            }
        } else {
            row("server", "not measured (give --server-pid or --spawn)")
        }
        if let micros = holdCPUMicros, let percent = holdCPUPercent {
            row(
                "server CPU during hold",
                "\(format(micros / 1000)) ms (\(TextFormat.number(percent, digits: 2)) % of one CPU)")
        }
        row("pings answered in hold", "\(results.pingsAnswered)")
        row("dropped during hold", "\(results.dropped.count)")
        if let limit = results.serverDescriptorLimit {
            row("server descriptor limit", limit == Int.max ? "unlimited" : "\(limit)")
        }
        for reason in results.dropped.prefix(5) { row("dropped", reason) }
        return lines.joined(separator: "\n")
    }

    func json() -> String {
        var fields = [
            "\"connections\":\(results.connections)",
            "\"sources\":[" + results.sources.map { "\"\($0)\"" }.joined(separator: ",") + "]",
            "\"connectSeconds\":\(TextFormat.number(results.connectSeconds, digits: 3))",
            "\"holdSeconds\":\(TextFormat.number(results.holdSeconds, digits: 3))",
        ]
        if let before = results.beforeConnect, let after = results.afterConnect, let hold = results.afterHold,
            let perConnection = rssPerConnection
        {
            fields += [
                "\"serverRssBeforeKiB\":\(before.rssKiB)", "\"serverRssAfterKiB\":\(after.rssKiB)",
                "\"serverRssAfterHoldKiB\":\(hold.rssKiB)",
                "\"rssPerConnectionBytes\":\(TextFormat.number(perConnection, digits: 0))",
            ]
        }
        if let setup = setupCPUMicrosPerConnection {
            fields.append("\"serverSetupCpuMicrosPerConnection\":\(TextFormat.number(setup, digits: 1))")
        }
        if let micros = holdCPUMicros {
            fields.append("\"serverHoldCpuMicros\":\(TextFormat.number(micros, digits: 0))")
        }
        fields.append("\"pingsAnswered\":\(results.pingsAnswered)")
        fields.append("\"dropped\":\(results.dropped.count)")
        if let limit = results.serverDescriptorLimit, limit != Int.max {
            fields.append("\"serverDescriptorLimit\":\(limit)")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    private func mebibytes(_ kibibytes: Int) -> String {
        "\(TextFormat.number(Double(kibibytes) / 1024, digits: 1)) MiB"
    }
}
