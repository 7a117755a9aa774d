import SignalCore
import SignalProtocol
import SignalSystem

/// `GET /metrics`: everything ringd measures, in the Prometheus text format,
/// behind `metrics.key` or the API key on the public listeners,
/// and without it on the `metrics.listen` address, which serves nothing
/// else. Each source is read once per scrape (a lock held only to copy or
/// count), then written out.
enum MetricsRoute {
    static func add(
        to table: inout RouteTable, stats: ServerStats, service: SignalingService, webhooks: Webhooks?,
        needsKey: Bool = true
    ) {
        table.add("GET", "/metrics") { request, _ in
            let respond = {
                var headers = HTTPHeaders()
                headers.add("Content-Type", PrometheusText.contentType)
                let text = scrape(stats: stats, service: service, webhooks: webhooks)
                return HTTPRoute.respond(HTTPResponse(status: .ok, headers: headers, body: Array(text.utf8)))
            }
            guard needsKey else { return respond() }
            if let key = metricsKey(request), service.keys.isMetricsKey(key) { return respond() }
            return RestRoutes.authorized(request, service, respond)
        }
    }

    /// The key a scrape presents: `Authorization: Bearer` (what Prometheus
    /// sends for `authorization: {credentials: …}`) or `X-Api-Key`.
    private static func metricsKey(_ request: HTTPRequest) -> String? {
        if let authorization = request.headers["Authorization"], authorization.lowercased().hasPrefix("bearer ") {
            return String(authorization.dropFirst("bearer ".count)).trimmingWhitespace()
        }
        return request.headers["X-Api-Key"]
    }

    static func scrape(stats: ServerStats, service: SignalingService, webhooks: Webhooks?) -> String {
        var text = PrometheusText()
        writeServer(stats, service, into: &text)
        writeCalls(service, into: &text)
        // The embedded store's; a cluster node has none (PostgreSQL has its own statistics).
        if let stats = service.backend.stats { writeStore(stats, into: &text) }
        if case .cluster(let node) = service.backend { writeCluster(node.workers, into: &text) }
        writeOutbound(service, webhooks, into: &text)
        ProcessMetrics.read()?.write(to: &text)
        return text.text
    }

    private static func writeServer(_ stats: ServerStats, _ service: SignalingService, into text: inout PrometheusText)
    {
        text.single(
            "ringd_connections_open", .gauge, "Connections open now (HTTP and WebSocket, plain and TLS).",
            Double(stats.openConnections))
        text.single(
            "ringd_connections_accepted_total", .counter, "Connections admitted since start.",
            Double(stats.acceptedConnections))
        text.single(
            "ringd_devices_authenticated", .gauge, "Authenticated signaling devices connected now.",
            Double(service.authenticatedDevices))
        let handshakes = stats.tlsHandshakes
        text.family("ringd_tls_handshakes_total", .counter, "TLS handshakes since start, by result.")
        text.sample("ringd_tls_handshakes_total", [("result", "ok")], Double(handshakes.completed))
        text.sample("ringd_tls_handshakes_total", [("result", "failed")], Double(handshakes.failed))
        let metrics = service.metrics
        text.family("ringd_request_errors_total", .counter, "Error results sent to signaling clients, by code.")
        for (code, count) in metrics.errorTotals {
            text.sample("ringd_request_errors_total", [("code", code)], Double(count))
        }
        text.single(
            "ringd_rate_limited_requests_total", .counter,
            "Signaling frames refused with ERR_RATE_LIMITED.", Double(metrics.rateLimited.value))
        text.family(
            "ringd_event_loop_lag_seconds", .histogram,
            "How late each event loop's once-a-second probe timer fired.")
        for (loop, histogram) in metrics.loopLagSeconds {
            text.histogram(
                "ringd_event_loop_lag_seconds", [("loop", String(loop))], bounds: histogram.bounds,
                histogram.snapshot)
        }
    }

    private static func writeCalls(_ service: SignalingService, into text: inout PrometheusText) {
        let live = service.liveCallCounts
        text.family("ringd_calls_live", .gauge, "Live calls now, by status.")
        for status in [CallStatus.initiated, .ongoing] {
            text.sample("ringd_calls_live", [("status", status.rawValue)], Double(live[status] ?? 0))
        }
        let metrics = service.metrics
        let transitions = metrics.transitionTotals.sorted {
            ($0.key.status.rawValue, $0.key.reason?.rawValue ?? "") < (
                $1.key.status.rawValue, $1.key.reason?.rawValue ?? ""
            )
        }
        text.family(
            "ringd_call_transitions_total", .counter,
            "Committed call changes, by the status reached and the end reason (empty while live).")
        for (key, count) in transitions {
            text.sample(
                "ringd_call_transitions_total",
                [("status", key.status.rawValue), ("reason", key.reason?.rawValue ?? "")],
                Double(count))
        }
        text.family("ringd_call_ring_seconds", .histogram, "Initiated to accepted, for accepted calls.")
        text.histogram("ringd_call_ring_seconds", bounds: metrics.ringSeconds.bounds, metrics.ringSeconds.snapshot)
        text.family(
            "ringd_call_setup_seconds", .histogram,
            "Initiated to the commit of the acceptance (when the caller can be told), for accepted calls.")
        text.histogram("ringd_call_setup_seconds", bounds: metrics.setupSeconds.bounds, metrics.setupSeconds.snapshot)
    }

    private static func writeStore(_ stats: StoreStats, into text: inout PrometheusText) {
        text.family(
            "ringd_store_commit_seconds", .histogram, "Time a store batch with writes spent in its transaction.")
        text.histogram("ringd_store_commit_seconds", bounds: stats.commitSeconds.bounds, stats.commitSeconds.snapshot)
        text.family("ringd_store_batch_size", .histogram, "Jobs per store batch (group commit).")
        text.histogram("ringd_store_batch_size", bounds: stats.batchSize.bounds, stats.batchSize.snapshot)
        text.family(
            "ringd_store_batches_total", .counter,
            "Store batches run, by thread: an event loop at the end of its pass, or the writer thread.")
        text.sample(
            "ringd_store_batches_total", [("thread", "loop")], Double(stats.loopBatches.load(ordering: .relaxed)))
        text.sample(
            "ringd_store_batches_total", [("thread", "writer")],
            Double(stats.writerThreadBatches.load(ordering: .relaxed)))
    }

    /// A cluster node's workers: what waits for them, how long, and what was refused.
    private static func writeCluster(_ workers: ClusterWorkers, into text: inout PrometheusText) {
        text.single(
            "ringd_cluster_queued_inputs", .gauge, "Inputs queued on the cluster node's workers, not yet started.",
            Double(workers.depth))
        text.family(
            "ringd_cluster_queue_wait_seconds", .histogram,
            "Time an input waited in the cluster node's worker queue before its transaction started.")
        text.histogram(
            "ringd_cluster_queue_wait_seconds", bounds: workers.waitSeconds.bounds, workers.waitSeconds.snapshot)
        text.single(
            "ringd_cluster_shed_total", .counter,
            "Requests, auths and WebSocket upgrades refused because the worker queue was full (cluster.maxQueuedInputs).",
            Double(workers.shed))
    }

    private static func writeOutbound(
        _ service: SignalingService, _ webhooks: Webhooks?, into text: inout PrometheusText
    ) {
        let pushes = service.pushTokens.totals
        text.family("ringd_push_outcomes_total", .counter, "Outcomes of pushes since start.")
        for outcome in PushOutcome.allCases {
            text.sample("ringd_push_outcomes_total", [("outcome", outcome.rawValue)], Double(pushes[outcome] ?? 0))
        }
        let alerts = service.pushTokens.alertTotals
        text.family(
            "ringd_push_missed_call_alerts_total", .counter,
            "Outcomes of missed-call alerts since start (counted among the pushes too).")
        for outcome in PushOutcome.allCases {
            text.sample(
                "ringd_push_missed_call_alerts_total", [("outcome", outcome.rawValue)], Double(alerts[outcome] ?? 0))
        }
        guard let webhooks else { return }
        let depth = webhooks.dispatcher.depth
        text.single(
            "ringd_webhook_outbox_pending", .gauge, "Webhook deliveries waiting in memory to be sent.",
            Double(depth.pending))
        text.single(
            "ringd_webhook_outbox_backlog", .gauge,
            "1 while more deliveries wait in the store than in memory.", depth.backlog ? 1 : 0)
        if let oldest = depth.oldestCreatedAt {
            text.single(
                "ringd_webhook_outbox_oldest_pending_timestamp_seconds", .gauge,
                "When the oldest webhook delivery held in memory was created.", Double(oldest) / 1000)
        }
    }
}

/// The router of the `metrics.listen` address: `GET /metrics`, no key.
final class MetricsRouter: HTTPRouter {
    private var table = RouteTable()

    init(context: ServerContext, service: SignalingService, webhooks: Webhooks?) {
        MetricsRoute.add(to: &table, stats: context.stats, service: service, webhooks: webhooks, needsKey: false)
    }

    func route(_ request: HTTPRequest, from _: SocketAddress) -> HTTPRoute { table.route(request) }
}

extension SignalingService {
    /// Devices authenticated now, counted under the core's lock.
    var authenticatedDevices: Int {
        core.withLock { $0.machine.devices.values.reduce(0) { $0 + $1.count } }
    }

    /// Live calls by status, counted under the core's lock.
    var liveCallCounts: [CallStatus: Int] {
        core.withLock { core in
            var counts: [CallStatus: Int] = [:]
            for call in core.machine.liveCalls.values { counts[call.status, default: 0] += 1 }
            return counts
        }
    }
}
