import SignalSystem

/// A token bucket: `burst` requests at once, refilled at `rate` per second.
package struct RateLimiter {
    private let rate: Double
    private let burst: Double
    private var tokens: Double
    private var last: Deadline

    /// A full bucket.
    package init(rate: Int, burst: Int) {
        self.rate = Double(rate)
        self.burst = Double(burst)
        tokens = Double(burst)
        last = Deadline.now()
    }

    /// Takes a token if one is left; false means the request is over the limit.
    package mutating func allow() -> Bool {
        let now = Deadline.now()
        tokens = min(burst, tokens + max(0, now.seconds(since: last)) * rate)
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// After a refusal: milliseconds until the bucket holds a token again
    /// (at least 1; a bucket that never refills says a day).
    package var millisecondsUntilNextToken: Int64 {
        let wait = ((1 - tokens) / rate * 1000).rounded(.up)
        return wait.isFinite ? Int64(min(max(1, wait), 86_400_000)) : 86_400_000
    }
}
