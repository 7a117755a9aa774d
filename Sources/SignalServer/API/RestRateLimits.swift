import SignalCore
import Synchronization

/// `limits.restRequestsPerSecond`: a token bucket per API key, shared by
/// every loop of this node, so one runaway backend cannot take the REST
/// API from the others. Off at 0, the default: the keys are the
/// operator's own servers'.
final class RestRateLimits: Sendable {
    private let rate: Int
    private let buckets = Mutex<[String: RateLimiter]>([:])

    init(requestsPerSecond: Int) { rate = requestsPerSecond }

    /// Takes a request of `key`; nil when it may go on, else the
    /// milliseconds until it would be taken. The bucket holds a second's worth.
    func refusal(for key: String) -> Int64? {
        guard rate > 0 else { return nil }
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? RateLimiter(rate: rate, burst: rate)
            defer { buckets[key] = bucket }
            return bucket.allow() ? nil : bucket.millisecondsUntilNextToken
        }
    }
}
