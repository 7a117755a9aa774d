/// ringd's webhooks: the outbox the signaling service writes in its
/// transactions, the dispatcher that sends it, and libcurl under both.
final class Webhooks: Sendable {
    let outbox: WebhookOutbox
    let dispatcher: WebhookDispatcher

    /// Nil when no endpoint is enabled. Throws when libcurl cannot start.
    init?(settings: WebhookSettings, store: CallStore, wall: @escaping @Sendable () -> Int64) throws(OutboundError) {
        let endpoints = settings.endpoints.filter(\.enabled)
        guard !endpoints.isEmpty else { return nil }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: settings.concurrency, caFile: settings.caFile)
        dispatcher = WebhookDispatcher(settings: settings, poster: client, store: store, wall: wall)
        outbox = WebhookOutbox(endpoints: endpoints, dispatcher: dispatcher)
    }

    /// Takes what the store holds as pending, as much as the dispatcher
    /// holds in memory (before the service's start adds events of its own,
    /// which the outbox hands over itself).
    func load(from store: CallStore) throws(StoreError) {
        let limit = dispatcher.memoryLimit
        dispatcher.loaded(try store.loadPendingWebhookDeliveries(from: 0, limit: limit), limit: limit)
    }

    /// Starts sending.
    func start() { dispatcher.start() }

    /// Stops sending; what is not delivered stays pending in the store.
    func stop() { dispatcher.stop() }
}

extension OutboundHTTPClient: WebhookPoster {
    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Double,
              completion: @escaping @Sendable (WebhookAttemptResult) -> Void) {
        send(OutboundRequest(url: url, headers: headers, body: body, timeout: timeout)) { response in
            if let error = response.error {
                completion(.failure(error.description))
            } else if let status = response.status {
                completion(.status(status))
            } else {
                completion(.failure("no answer"))
            }
        }
    }
}
