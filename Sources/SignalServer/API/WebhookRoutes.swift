import SignalCrypto
import SignalProtocol

/// The REST API over the webhook outbox (API key in `X-Api-Key`, like
/// ``RestRoutes``):
///
/// - `GET /v1/webhooks/deliveries?status&limit&cursor` → `{"deliveries","next"}`, newest first
/// - `POST /v1/webhooks/deliveries/{id}/retry` → the delivery, pending again (409 unless it failed)
/// - `POST /v1/webhooks/deliveries/retry?status=failed` → `{"retried":N}`
/// - `POST /v1/webhooks/test` with `{"url"}` → how a test event to that endpoint went
/// - `GET /v1/webhooks/outbox` → `{"pending","backlog","oldestPendingCreatedAt"}`
enum WebhookRoutes {
    static func add(to table: inout RouteTable, service: SignalingService, webhooks: Webhooks?) {
        table.add("GET", "/v1/webhooks/deliveries") { request, _ in
            RestRoutes.authorized(request, service) { list(request, webhooks?.store ?? service.backend.webhookStore) }
        }
        table.add("POST", "/v1/webhooks/deliveries/retry") { request, _ in
            RestRoutes.authorized(request, service) { retry(id: nil, request, service, webhooks) }
        }
        table.add("POST", "/v1/webhooks/deliveries/{id}/retry") { request, parameters in
            RestRoutes.authorized(request, service) { retry(id: parameters["id"] ?? "", request, service, webhooks) }
        }
        table.add("POST", "/v1/webhooks/test") { request, _ in
            RestRoutes.authorized(request, service) { test(request, webhooks) }
        }
        table.add("GET", "/v1/webhooks/outbox") { request, _ in
            RestRoutes.authorized(request, service) {
                .later { sink in
                    let answer: @Sendable (Result<Webhooks.OutboxDepth, StoreError>) -> Void = { result in
                        switch result {
                        case .success(let depth):
                            sink.send(
                                .json(
                                    .ok,
                                    .object([
                                        ("pending", .integer(Int64(depth.pending))),
                                        ("backlog", .bool(depth.backlog)),
                                        (
                                            "oldestPendingCreatedAt",
                                            depth.oldestCreatedAt.map(JSONValue.integer) ?? .null
                                        ),
                                    ])))
                        case .failure(let error):
                            // The cluster's database: another node may reach it.
                            sink.send(.error(.serviceUnavailable, "the store failed: \(error.code)"))
                        }
                    }
                    guard let webhooks else { return answer(.success((0, false, nil))) }
                    webhooks.depth(completion: answer)
                }
            }
        }
    }

    /// `dlv_<seq>_<8 hex digits naming the endpoint>`.
    static func id(of delivery: WebhookDelivery) -> String { "dlv_\(delivery.seq)_\(tag(delivery.endpoint))" }

    private static func tag(_ endpoint: String) -> String {
        Crypto.sha1(Array(endpoint.utf8)).prefix(4).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    static func json(_ delivery: WebhookDelivery) -> JSONValue {
        .object([
            ("id", .string(id(of: delivery))), ("endpoint", .string(delivery.endpoint)),
            ("eventId", .string(delivery.eventId)), ("sessionId", .string(delivery.sessionId)),
            ("trigger", .string(delivery.trigger)), ("status", .string(delivery.status.rawValue)),
            ("attempts", .integer(Int64(delivery.attempts))), ("nextAttemptAt", .integer(delivery.nextAttemptAt)),
            ("lastStatus", delivery.lastStatus.map { .integer(Int64($0)) } ?? .null),
            ("lastError", delivery.lastError.map(JSONValue.string) ?? .null),
            ("createdAt", .integer(delivery.createdAt)), ("updatedAt", .integer(delivery.updatedAt)),
        ])
    }

    private static func list(_ request: HTTPRequest, _ store: any WebhookStore) -> HTTPRoute {
        var query = WebhookDeliveryQuery()
        for (name, value) in request.query {
            switch name {
            case "status":
                guard let status = WebhookDeliveryStatus(rawValue: value) else {
                    return .respond(.error(.badRequest, "status must be pending, delivered or failed"))
                }
                query.status = status
            case "limit":
                guard let limit = Int(value), (1 ... 100).contains(limit) else {
                    return .respond(.error(.badRequest, "limit must be an integer from 1 to 100"))
                }
                query.limit = limit
            case "cursor":
                query.cursor = value
            default:
                return .respond(.error(.badRequest, "unknown query parameter \(name)"))
            }
        }
        let asked = query
        return .later { sink in
            store.webhookDeliveries(asked) { result in
                switch result {
                case .success(let page):
                    sink.send(
                        .json(
                            .ok,
                            .object([
                                ("deliveries", .array(page.deliveries.map(json))),
                                ("next", page.next.map(JSONValue.string) ?? .null),
                            ])))
                case .failure(let error) where error.code == .badCursor:
                    sink.send(.error(.badRequest, error.message))
                case .failure(let error):
                    sink.send(.error(.internalServerError, "the store failed: \(error.code)"))
                }
            }
        }
    }

    private static func retry(
        id: String?, _ request: HTTPRequest, _ service: SignalingService,
        _ webhooks: Webhooks?
    ) -> HTTPRoute {
        guard let webhooks else { return .respond(.error(.notFound, "no webhook endpoint is enabled")) }
        var target: (endpoint: String, seq: Int64)?
        if let id {
            let parts = id.split(separator: "_")
            guard parts.count == 3, parts[0] == "dlv", let seq = Int64(parts[1]),
                let endpoint = webhooks.dispatcher.endpointURLs.first(where: { tag($0) == parts[2] })
            else {
                return .respond(.error(.notFound, "no delivery \(id)"))
            }
            target = (endpoint, seq)
        } else {
            guard request.queryValue("status") == "failed", request.query.count == 1 else {
                return .respond(.error(.badRequest, "say which deliveries: ?status=failed"))
            }
        }
        let (endpoint, seq) = (target?.endpoint, target?.seq)
        return .later { sink in
            webhooks.store.retryWebhookDeliveries(endpoint: endpoint, seq: seq, now: service.now) { result in
                switch result {
                case .success(let retried):
                    webhooks.retried(retried)
                    if id == nil {
                        sink.send(.json(.ok, .object([("retried", .integer(Int64(retried.count)))])))
                    } else if let delivery = retried.first {
                        sink.send(.json(.ok, json(delivery)))
                    } else {
                        sink.send(
                            .error(
                                .conflict, "delivery \(id ?? "") has not failed (or does not exist); nothing to retry"))
                    }
                case .failure(let error):
                    sink.send(.error(.internalServerError, "the store failed: \(error.code)"))
                }
            }
        }
    }

    private static func test(_ request: HTTPRequest, _ webhooks: Webhooks?) -> HTTPRoute {
        guard let body = try? JSONValue.parse(request.body), let url = body["url"]?.stringValue else {
            return .respond(.error(.badRequest, "the body must be {\"url\": <a configured endpoint>}"))
        }
        guard let endpoint = webhooks?.dispatcher.endpoint(url), let webhooks else {
            return .respond(.error(.notFound, "no enabled webhook endpoint \(url)"))
        }
        return .later { sink in
            webhooks.dispatcher.sendTest(to: endpoint) { result in
                let answer: JSONValue =
                    switch result {
                    case .status(let status):
                        .object([
                            ("delivered", .bool((200 ..< 300).contains(status))), ("status", .integer(Int64(status))),
                            ("error", .null),
                        ])
                    case .failure(let message):
                        .object([("delivered", .bool(false)), ("status", .null), ("error", .string(message))])
                    }
                sink.send(.json(.ok, answer))
            }
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
