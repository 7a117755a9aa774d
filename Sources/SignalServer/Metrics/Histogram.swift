import Synchronization

/// A Prometheus histogram: counts of observations at or below each bound,
/// their sum and count. Observers are the thread running a store batch and one
/// timer a second per loop, so one short lock per observation costs less
/// than keeping an atomic per bucket.
final class Histogram: Sendable {
    /// Upper bounds, ascending; `+Inf` is implied.
    let bounds: [Double]

    /// What a scrape reads: per-bucket (not cumulative) counts, the last for `+Inf`.
    struct Snapshot: Sendable, Equatable {
        var counts: [Int]
        var sum: Double = 0
        var count: Int { counts.reduce(0, +) }
    }

    private let state: Mutex<Snapshot>

    init(bounds: [Double]) {
        self.bounds = bounds
        state = Mutex(Snapshot(counts: Array(repeating: 0, count: bounds.count + 1)))
    }

    func observe(_ value: Double) {
        // Found outside the lock: the bounds never change.
        let index = bounds.firstIndex(where: { value <= $0 }) ?? bounds.count
        state.withLock { snapshot in
            snapshot.counts[index] += 1
            snapshot.sum += value
        }
    }

    var snapshot: Snapshot { state.withLock { $0 } }

    /// Seconds from 1 ms to 10 s: store commits, event-loop lag.
    static let shortSeconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// Seconds from 100 ms to 2 min: how long calls ring.
    static let ringSeconds = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 45, 60, 120]
    /// Jobs per store batch.
    static let batchSizes: [Double] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
}
