import SignalProtocol

/// The webhook outbox (`webhook_deliveries`): jobs of the webhook
/// dispatcher and the REST routes. Its rows are written in the transaction
/// of the change they tell of (``WebhookOutbox``), not here.
extension CallStore {
    /// Pending webhook deliveries of changes from position `seq` on, oldest
    /// first, at most `limit`, after every job queued before.
    func pendingWebhookDeliveries(
        from seq: Int64, limit: Int,
        completion: @escaping @Sendable (Result<[WebhookDelivery], StoreError>) -> Void
    ) {
        submit(writes: false, completion: completion) { connection throws(StoreError) in
            try connection.pendingWebhookDeliveries(from: seq, limit: limit)
        }
    }

    /// ``pendingWebhookDeliveries(from:limit:completion:)``, blocking (for start-up).
    func loadPendingWebhookDeliveries(from seq: Int64, limit: Int) throws(StoreError) -> [WebhookDelivery] {
        try wait(writes: false) { connection throws(StoreError) in
            try connection.pendingWebhookDeliveries(from: seq, limit: limit)
        }
    }

    /// Records how `delivery` stands after an attempt (not a link of the
    /// change chain: a delivery's state is not a call change).
    public func saveWebhookAttempt(
        _ delivery: WebhookDelivery,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        submit(writes: true, completion: completion) { connection throws(StoreError) in
            try connection.update(delivery)
        }
    }

    /// One page of the webhook outbox, newest change first.
    public func webhookDeliveries(
        _ query: WebhookDeliveryQuery,
        completion: @escaping @Sendable (Result<(deliveries: [WebhookDelivery], next: String?), StoreError>) -> Void
    ) {
        submit(writes: false, completion: completion) { connection throws(StoreError) in
            try connection.webhookDeliveries(query)
        }
    }

    /// Sets the failed delivery of `seq` to `endpoint` (or, with nil, every
    /// failed one) pending again, due at `now`, its attempts counted afresh;
    /// returns them as they now stand.
    func retryWebhookDeliveries(
        endpoint: String?, seq: Int64?, now: Int64,
        completion: @escaping @Sendable (Result<[WebhookDelivery], StoreError>) -> Void
    ) {
        submit(writes: true, completion: completion) { connection throws(StoreError) in
            var failed: [WebhookDelivery]
            if let endpoint, let seq {
                failed = try connection.webhookDelivery(endpoint: endpoint, seq: seq).map { [$0] } ?? []
            } else {
                failed = try connection.failedWebhookDeliveries()
            }
            failed = failed.filter { $0.status == .failed }
            for index in failed.indices {
                failed[index].status = .pending
                failed[index].attempts = 0
                failed[index].nextAttemptAt = now
                failed[index].updatedAt = now
                try connection.update(failed[index])
            }
            return failed
        }
    }

    /// Deletes up to `limit` settled deliveries last touched before `cutoff`.
    func pruneWebhookDeliveries(
        before cutoff: Int64, limit: Int,
        completion: @escaping @Sendable (Result<Int, StoreError>) -> Void
    ) {
        submit(writes: true, completion: completion) { connection throws(StoreError) in
            try connection.pruneWebhookDeliveries(before: cutoff, limit: limit)
        }
    }
}
