/// Where the outbox is kept, for the dispatcher and the REST routes: the
/// node's ``CallStore`` (SQLite), or a cluster's PostgreSQL
/// (``ClusterWebhookStore``). Completions run off the caller's thread.
protocol WebhookStore: Sendable {
    /// Pending deliveries the dispatcher does not hold yet, oldest change
    /// first, at most `limit`; `seq` is where the previous read ended (a
    /// store that marks what it handed out may go by its marks instead).
    func pendingWebhookDeliveries(
        from seq: Int64, limit: Int,
        completion: @escaping @Sendable (Result<[WebhookDelivery], StoreError>) -> Void)

    /// Records how `delivery` stands after an attempt.
    func saveWebhookAttempt(
        _ delivery: WebhookDelivery, completion: @escaping @Sendable (Result<Void, StoreError>) -> Void)

    /// Deletes up to `limit` settled deliveries last touched before `cutoff`; how many.
    func pruneWebhookDeliveries(
        before cutoff: Int64, limit: Int,
        completion: @escaping @Sendable (Result<Int, StoreError>) -> Void)

    /// One page of the outbox, newest change first.
    func webhookDeliveries(
        _ query: WebhookDeliveryQuery,
        completion: @escaping @Sendable (Result<(deliveries: [WebhookDelivery], next: String?), StoreError>) -> Void)

    /// Sets the failed delivery of `seq` to `endpoint` (or, with nil, every
    /// failed one) pending again, due at `now`; returns them as they now stand.
    func retryWebhookDeliveries(
        endpoint: String?, seq: Int64?, now: Int64,
        completion: @escaping @Sendable (Result<[WebhookDelivery], StoreError>) -> Void)
}

extension CallStore: WebhookStore {}
