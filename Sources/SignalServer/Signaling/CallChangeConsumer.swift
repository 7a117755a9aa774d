import SignalProtocol

/// Something that follows every change of every call (webhooks, metrics):
/// the one place a new consumer plugs in, handed to the
/// ``SignalingService`` when it is made.
protocol CallChangeConsumer: Sendable {
    /// Writes what must be durable with `changes`, inside the store
    /// transaction that commits them, on the thread running the batch (an
    /// outbox row, say). Throwing fails the changes: none is committed, the
    /// requester hears `ERR_INTERNAL`, and memory is rebuilt from the store.
    func record(_ changes: [CallChange], in store: StoreConnection) throws(StoreError)

    /// Whether ``record(_:in:)`` writes anything: a consumer that only
    /// follows commits says no, and commits without such consumers carry no
    /// recording work into the store's transaction.
    var records: Bool { get }

    /// `changes` (never empty) were committed; runs in commit order, before
    /// any device hears of them, on the thread running the batch (at start-up,
    /// for the calls a crash left live, on the thread that restarts the
    /// service). Keep it quick: hand work to a thread of your own.
    func committed(_ changes: [CallChange])
}

extension CallChangeConsumer {
    func record(_ changes: [CallChange], in store: StoreConnection) throws(StoreError) {}
    var records: Bool { true }
    func committed(_ changes: [CallChange]) {}
}
