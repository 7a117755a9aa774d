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

    /// The pending deliveries of `change`: one per endpoint that wants its event.
    func deliveries(of change: CallChange) -> [WebhookDelivery] {
        // Every change the machine makes has a trigger; one that had none
        // would be a bug of the trigger table, not a reason to fail a call.
        guard let event = try? WebhookEvent(change: change) else { return [] }
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
