/// How a client reconnects after losing its connection: exponential
/// backoff with jitter, so that many clients cut off by the same outage do
/// not come back in step. RingKit's RingClient takes one; SignalClient
/// draws its waits from the same curve.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Whether to reconnect at all.
    public var isEnabled: Bool
    /// Seconds before the first attempt.
    public var initialDelay: Double
    /// Each failed attempt multiplies the delay by this.
    public var multiplier: Double
    /// The longest delay, in seconds.
    public var maxDelay: Double
    /// The fraction of each delay that is random (0: none, 1: anywhere
    /// between zero and the delay).
    public var jitter: Double
    /// Attempts before giving up; nil tries until the app disconnects.
    public var maxAttempts: Int?

    public init(
        isEnabled: Bool = true, initialDelay: Double = 0.2, multiplier: Double = 2, maxDelay: Double = 30,
        jitter: Double = 0.5, maxAttempts: Int? = nil
    ) {
        self.isEnabled = isEnabled
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.maxAttempts = maxAttempts
    }

    /// Reconnect forever: 0.2 s, 0.4 s, 0.8 s … up to 30 s, each up to half shorter at random.
    public static let `default` = ReconnectPolicy()
    /// Never reconnect: a lost connection leaves the client disconnected.
    public static let never = ReconnectPolicy(isEnabled: false)

    /// Seconds to wait before the attempt that follows `failures` failed
    /// ones; `random` in 0..<1 picks where in the jitter it falls.
    public func delay(afterFailures failures: Int, random: Double) -> Double {
        let exponential = initialDelay * pow(multiplier, failures)
        let capped = min(maxDelay, exponential)
        return capped * (1 - min(max(jitter, 0), 1) * random)
    }

    /// ``delay(afterFailures:random:)`` with a random draw.
    public func delay(afterFailures failures: Int) -> Double {
        delay(afterFailures: failures, random: Double.random(in: 0 ..< 1))
    }

    /// `base` to the power `exponent` by repeated multiplication (no libm
    /// import, and the exponent is small), stopping once past ``maxDelay``.
    private func pow(_ base: Double, _ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0 ..< max(exponent, 0) {
            result *= base
            if initialDelay * result >= maxDelay { break }
        }
        return result
    }
}
