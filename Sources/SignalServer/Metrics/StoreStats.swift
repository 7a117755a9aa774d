import Synchronization

/// How the store's writer is doing, for `GET /metrics`.
final class StoreStats: Sendable {
    /// Seconds a batch with writes spent in its transaction, BEGIN to
    /// COMMIT (its completions not included): the time a change waits for
    /// its commit once the writer took it.
    let commitSeconds = Histogram(bounds: Histogram.shortSeconds)
    /// Jobs per batch: how much group commit is saving.
    let batchSize = Histogram(bounds: Histogram.batchSizes)
    /// Batches run, by where: on an event loop, at the end of its pass, or
    /// on the writer thread (see ``StoreRunner``).
    let loopBatches = Atomic<Int>(0)
    let writerThreadBatches = Atomic<Int>(0)
}
