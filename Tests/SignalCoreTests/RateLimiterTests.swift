import Testing

@testable import SignalCore

/// The token bucket of each connection, and the wait it reports once empty.
struct RateLimiterTests {
    @Test func theBurstPassesThenTheWaitIsUnderOneTokensTime() {
        var limiter = RateLimiter(rate: 4, burst: 3)
        let answers = (0 ..< 4).map { _ in limiter.allow() }
        #expect(answers == [true, true, true, false])
        let wait = limiter.millisecondsUntilNextToken
        #expect((1 ... 250).contains(wait), "\(wait)")
    }

    /// A bucket that never refills (no rate) reports a long wait, not a trap.
    @Test func aBucketWithoutARateSaysADay() {
        var limiter = RateLimiter(rate: 0, burst: 1)
        let answers = (0 ..< 2).map { _ in limiter.allow() }
        #expect(answers == [true, false])
        #expect(limiter.millisecondsUntilNextToken == 86_400_000)
    }
}
