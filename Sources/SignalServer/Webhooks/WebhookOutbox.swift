import SignalProtocol
import Synchronization

/// The webhooks' ``CallChangeConsumer``: a transactional outbox. It writes
/// one pending delivery per event and endpoint in the transaction that
/// commits the change (so an event exists exactly when its change does),
/// and hands them to the ``WebhookDispatcher`` once committed.
final class WebhookOutbox: CallChangeConsumer {
    private let endpoints: [WebhookEndpoint]
    private let dispatcher: WebhookDispatcher
    /// Deliveries written by `record` and not yet handed on, by position:
    /// a rolled-back job's are dropped when a later change is committed.
    private let written = Mutex<[Int64: [WebhookDelivery]]>([:])

    init(endpoints: [WebhookEndpoint], dispatcher: WebhookDispatcher) {
        self.endpoints = endpoints
        self.dispatcher = dispatcher
    }

    /// The event of `change`: nil for a change that reports nothing (its
    /// status stayed: a ringing acknowledgement); a failure for one that
    /// should have reported something and cannot (no trigger for its
    /// status, or no position), which only a bug makes.
    static func event(of change: CallChange) -> Result<WebhookEvent?, WebhookError> {
        if let before = change.before, before.status == change.after.status { return .success(nil) }
        return Result { () throws(WebhookError) in try WebhookEvent(change: change) }
    }

    /// The pending deliveries of `change`: one per endpoint that wants its event.
    func deliveries(of change: CallChange) -> [WebhookDelivery] {
        let event: WebhookEvent
        switch Self.event(of: change) {
        case .success(let reported?): event = reported
        case .success(nil): return []
        case .failure(let error):
            // A bug of the trigger table, not a reason to fail the call:
            // the change commits without its event, which the log tells.
            Log.repeated(.error, "webhook-event-dropped", "webhook event dropped: \(error.message)")
            return []
        }
        return endpoints.filter { $0.wants(event.trigger) }.map { endpoint in
            WebhookDelivery(
                endpoint: endpoint.url, seq: event.seq, eventId: event.id, sessionId: event.sessionId,
                trigger: event.trigger.rawValue, createdAt: event.createdAt, body: event.body,
                status: .pending, attempts: 0, nextAttemptAt: event.createdAt, lastStatus: nil,
                lastError: nil, updatedAt: event.createdAt)
        }
    }

    func record(_ changes: [CallChange], in store: StoreConnection) throws(StoreError) {
        for change in changes {
            let deliveries = deliveries(of: change)
            for delivery in deliveries { try store.insert(delivery) }
            if !deliveries.isEmpty {
                let seq = change.after.seq
                written.withLock { $0[seq] = deliveries }
            }
        }
    }

    func committed(_ changes: [CallChange]) {
        guard let last = changes.map(\.after.seq).max() else { return }
        let deliveries = written.withLock { written -> [WebhookDelivery] in
            let done = written.keys.filter { $0 <= last }.sorted()
            var taken: [WebhookDelivery] = []
            let committed = Set(changes.map(\.after.seq))
            for seq in done {
                if let deliveries = written.removeValue(forKey: seq), committed.contains(seq) { taken += deliveries }
            }
            return taken
        }
        dispatcher.enqueueCommitted(deliveries)
    }
}
