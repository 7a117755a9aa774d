/// ringd's webhooks: the outbox the signaling service writes in its
/// transactions, the dispatcher that sends it, and libcurl under both.
final class Webhooks: Sendable {
    let outbox: WebhookOutbox
    let dispatcher: WebhookDispatcher
    /// Where the outbox is kept: the node's store, or a cluster's database.
    let store: any WebhookStore
    /// A cluster's database, whose webhook leader claims what it sends
    /// (``ClusterWebhooks``) rather than being handed it; nil on one node.
    private let cluster: ClusterWebhookStore?

    /// Nil when no endpoint is enabled.
    init?(
        settings: WebhookSettings, backend: CallBackend, client: OutboundHTTPClient,
        wall: @escaping @Sendable () -> Int64
    ) {
        let store = backend.webhookStore
        let cluster: ClusterWebhookStore? = if case .cluster(let node) = backend { node.webhookStore } else { nil }
        let endpoints = settings.endpoints.filter(\.enabled)
        guard !endpoints.isEmpty else { return nil }
        dispatcher = WebhookDispatcher(
            settings: settings, poster: WebhookClientPoster(client: client, caFile: settings.caFile),
            store: store, wall: wall)
        outbox = WebhookOutbox(endpoints: endpoints, dispatcher: dispatcher)
        self.store = store
        self.cluster = cluster
    }

    /// Failed deliveries the REST API set pending again. In a cluster the
    /// retry notified the leader, which claims them.
    func retried(_ deliveries: [WebhookDelivery]) {
        if cluster == nil { dispatcher.enqueue(deliveries) }
    }

    typealias OutboxDepth = (pending: Int, backlog: Bool, oldestCreatedAt: Int64?)

    /// How many deliveries wait, whether more wait than memory holds, and
    /// the oldest one's creation time: the dispatcher's on one node; in a
    /// cluster the database's, so that every node answers for the cluster
    /// (and fails when it cannot reach it, rather than claim none wait).
    func depth(completion: @escaping @Sendable (Result<OutboxDepth, StoreError>) -> Void) {
        guard let cluster else { return completion(.success(dispatcher.depth)) }
        let limit = dispatcher.memoryLimit
        cluster.pendingDepth { result in
            completion(result.map { pending, oldest in (pending, pending > limit, oldest) })
        }
    }

    /// Takes what the store holds as pending, as much as the dispatcher
    /// holds in memory (before the service's start adds events of its own,
    /// which the outbox hands over itself).
    func load(from store: CallStore) throws(StoreError) {
        let limit = dispatcher.readLimit(dispatcher.memoryLimit)
        dispatcher.loaded(try store.loadPendingWebhookDeliveries(from: 0, limit: limit), limit: limit)
    }

    /// Starts sending.
    func start() { dispatcher.start() }

    /// Stops sending; what is not delivered stays pending in the store.
    func stop() { dispatcher.stop() }
}

/// The dispatcher's transport: the shared client, with the webhooks' CA file.
struct WebhookClientPoster: WebhookPoster {
    let client: OutboundHTTPClient
    let caFile: String?

    func post(
        url: String, headers: [(String, String)], body: [UInt8], timeout: Double,
        completion: @escaping @Sendable (WebhookAttemptResult) -> Void
    ) {
        client.send(OutboundRequest(url: url, headers: headers, body: body, timeout: timeout, caFile: caFile)) {
            response in
            if let error = response.error {
                completion(.failure(error.description))
            } else if let status = response.status {
                completion(.status(status))
            } else {
                completion(.failure("no answer"))
            }
        }
    }

    /// The client is shared: its owner closes it.
    func close() {}
}
