import SignalClient
import SignalProtocol

/// What `ringctl logs` was asked for.
struct LogsRequest: Sendable {
    /// The filter and page size.
    let filter: CallLogFilter
    /// Follow `next` until the last page.
    let all: Bool

    /// The request on the command line.
    init(_ arguments: Arguments) throws(Failure) {
        var filter = CallLogFilter()
        filter.limit = try arguments.integer("--limit", in: CallLogFilter.limitRange) ?? CallLogFilter.defaultLimit
        filter.callType = try arguments.choice("--type", CallType.self)
        filter.direction = try arguments.choice("--direction", CallDirection.self)
        if let status = arguments.value("--status") {
            if status == "missed" {
                filter.missedOnly = true
            } else if let parsed = CallStatus(rawValue: status) {
                filter.status = parsed
            } else {
                let options = CallStatus.allCases.map(\.rawValue).joined(separator: "|")
                throw arguments.usage("--status needs one of \(options)|missed, not \"\(status)\"")
            }
        }
        if let with = arguments.value("--with") {
            guard Identifier.isValid(with) else { throw arguments.usage("--with needs a valid uid, not \"\(with)\"") }
            filter.with = with
        }
        self.filter = filter
        all = arguments.flag("--all")
    }
}

/// `ringctl logs`: the user's call history, newest first, as an aligned table
/// (or one `log` event per call).
enum LogsCommand {
    /// Reads the pages asked for and prints them.
    static func run(_ request: LogsRequest, settings: Settings, console: Console) async throws(Failure) {
        let client = try await settings.connect(for: .logs, reconnect: false)
        var filter = request.filter
        var logs: [CallLog] = []
        var next: String?
        repeat {
            let page: (logs: [CallLog], next: String?)
            do throws(ClientError) {
                page = try await client.getCallLogs(filter)
            } catch {
                await client.close()
                throw Failure(error, server: settings.server)
            }
            for log in page.logs { console.report(nil, event: "log", [("log", log.json)]) }
            logs += page.logs
            next = page.next
            filter.cursor = next
        } while request.all && next != nil
        await client.close()
        console.report(
            nil, event: "logs", [("count", .integer(Int64(logs.count))), ("next", next.map(JSONValue.string) ?? .null)])
        guard !console.json else { return }
        guard !logs.isEmpty else { return console.say("no calls") }
        for line in table(logs) { console.say(line) }
        if next != nil { console.say("(older calls: --all, or a larger --limit)") }
    }

    /// The aligned table of `logs`, header first.
    static func table(_ logs: [CallLog]) -> [String] {
        let header = ["TIME", "DIR", "WITH", "TYPE", "STATUS", "DURATION", ""]
        let rows = logs.map { log -> [String] in
            let call = log.call
            return [
                TimeText.local(milliseconds: call.initiatedAt),
                log.direction == .incoming ? "in" : "out",
                log.direction == .incoming ? call.initiator : call.receiver,
                call.callType.rawValue,
                call.status.rawValue,
                call.durationMs.map { TimeText.duration(milliseconds: $0) } ?? "-",
                log.missed ? "missed" : "",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.indices.map { column in
                let cell = row[column]
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 5 ? padding + cell : cell + padding
            }
            .joined(separator: "  ")
            .trimmingSuffixSpaces()
        }
    }
}

extension String {
    /// The string without trailing spaces.
    fileprivate func trimmingSuffixSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
