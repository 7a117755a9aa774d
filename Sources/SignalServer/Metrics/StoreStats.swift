/// How the store's writer thread is doing, for `GET /metrics`.
final class StoreStats: Sendable {
    /// Seconds a batch with writes spent in its transaction, BEGIN to
    /// COMMIT (its completions not included): the time a change waits for
    /// its commit once the writer took it.
    let commitSeconds = Histogram(bounds: Histogram.shortSeconds)
    /// Jobs per batch: how much group commit is saving.
    let batchSize = Histogram(bounds: Histogram.batchSizes)
}
