/// One step of a `--max` search: one fixed-rate run and whether it passed.
struct SearchStep {
    let report: Report
    let passed: Bool
}

/// What a `--max` search found.
struct SearchResult {
    let steps: [SearchStep]
    /// The index in `steps` of the highest passing rate, nil when no step passed.
    let best: Int?
    /// The search stopped at the highest rate its pairs can offer, still passing.
    let limitedByPairs: Bool
    /// A run at half the highest passing rate, twice as long as a step: the
    /// ring latency target is judged there. Nil when no step passed.
    let half: Report?
}

/// `ringbench calls --max`: on connections opened once, runs fixed-rate
/// steps, multiplying the rate while steps pass, halving it while they fail,
/// then bisecting between the highest passing and the lowest failing rate.
/// Each step drains its calls before the next starts (``CallRun/run(rate:duration:)``).
struct MaxSearch {
    /// The factor between steps while every step has passed.
    static let growth = 1.5
    /// The most steps a search runs, bisections included.
    static let maxSteps = 10
    /// The most bisection steps.
    static let maxBisections = 3
    /// Bisection stops once the bracket is narrower than this fraction of its passing rate.
    static let resolution = 0.05

    let options: CallOptions
    let run: CallRun

    /// The highest rate the pairs can offer without a busy pair missing its
    /// slot: a pair gets a slot every pairs/rate seconds, which should be
    /// three times the setup p99 bound.
    var pairLimit: Double { (Double(options.pairs) / (3 * options.maxP99Milliseconds / 1000)).rounded(.down) }

    /// Runs the steps, then the run at half the highest passing rate;
    /// throws only when the server cannot be measured.
    func search() throws -> SearchResult {
        let found = try findMax()
        guard let best = found.best else { return found }
        let half = try measure(
            rate: max(1, (found.steps[best].report.rate / 2).rounded()),
            duration: 2 * options.stepDuration
        ).report
        return SearchResult(steps: found.steps, best: found.best, limitedByPairs: found.limitedByPairs, half: half)
    }

    /// The steps of the search proper.
    private func findMax() throws -> SearchResult {
        var steps: [SearchStep] = []
        var passing: Double?
        var failing: Double?
        var bisections = 0
        var limitedByPairs = false
        var rate = max(1, min(options.rate.rounded(), pairLimit))
        while steps.count < MaxSearch.maxSteps {
            let step = try measure(rate: rate)
            steps.append(step)
            if step.passed { passing = rate } else { failing = rate }
            switch (passing, failing) {
            case (let low?, let high?):
                let middle = ((low + high) / 2).rounded()
                guard bisections < MaxSearch.maxBisections, (high - low) / low > MaxSearch.resolution,
                    middle > low, middle < high
                else { return result(steps, best: low, limitedByPairs) }
                bisections += 1
                rate = middle
            case (_?, nil):
                guard rate < pairLimit else {
                    limitedByPairs = true
                    return result(steps, best: rate, limitedByPairs)
                }
                rate = min((rate * MaxSearch.growth).rounded(), pairLimit)
            default:
                guard rate > 1 else { return result(steps, best: nil, limitedByPairs) }
                rate = max(1, (rate / 2).rounded())
            }
        }
        return result(steps, best: passing, limitedByPairs)
    }

    private func result(_ steps: [SearchStep], best rate: Double?, _ limitedByPairs: Bool) -> SearchResult {
        let best = rate.flatMap { rate in steps.lastIndex { $0.passed && $0.report.rate == rate } }
        return SearchResult(steps: steps, best: best, limitedByPairs: limitedByPairs, half: nil)
    }

    /// One step at `rate` (for `duration`, by default a step's), with the
    /// server sampled before and after.
    private func measure(rate: Double, duration: Double? = nil) throws -> SearchStep {
        let report = try Report.measure(
            run, pairs: options.pairs, rate: rate, duration: duration ?? options.stepDuration,
            meters: Meters(options))
        let results = report.results
        let passed =
            results.completed > 0 && results.failed == 0 && results.missedSlots == 0
            && results.connectionErrors.isEmpty && report.setupP99Milliseconds < options.maxP99Milliseconds
        return SearchStep(report: report, passed: passed)
    }
}
