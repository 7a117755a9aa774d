import SignalProtocol
import SignalReactor
import SignalSystem
import Synchronization

/// A counter bumped with an atomic add: cheap enough for the loops.
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)

    func increment() { storage.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { storage.load(ordering: .relaxed) }
}

/// What ringd counts about signaling, for `GET /metrics`: call transitions
/// and latencies (as a ``CallChangeConsumer``, on the thread that ran the store's batch),
/// error results sent to clients and rate-limited requests (on the loops and
/// the thread that ran the batch), and event-loop lag.
final class SignalingMetrics: CallChangeConsumer {
    /// A committed change, as `ringd_call_transitions_total` labels it.
    struct TransitionKey: Hashable, Sendable {
        var status: CallStatus
        var reason: EndReason?
    }

    /// Changes since start, by the status they reached; counted where
    /// commits are reported (the thread that ran the batch; at start-up, the thread that
    /// restarts the service), read by scrapes.
    private let transitions = Mutex<[TransitionKey: Int]>([:])
    /// Initiated to accepted, by the calls' own timestamps.
    let ringSeconds = Histogram(bounds: Histogram.ringSeconds)
    /// Initiated to the commit of the acceptance: how long until the caller
    /// can hear `ongoing`, less the network.
    let setupSeconds = Histogram(bounds: Histogram.ringSeconds)
    /// How late each loop's once-a-second timer fired, by loop index.
    private let loopLag = Mutex<[Int: Histogram]>([:])
    /// One counter per known code, made up front so counting takes no lock.
    private let errorsByCode: [String: AtomicCounter]
    /// Codes not in the list above (none today; a code added later lands here).
    private let otherErrors = Mutex<[String: Int]>([:])
    let rateLimited = AtomicCounter()
    private let wall: @Sendable () -> Int64

    /// Seconds between two lag probes of a loop.
    static let lagProbeInterval = 1.0

    /// Every code ``SignalErrorCode`` defines.
    static let knownCodes: [SignalErrorCode] = [
        .badRequest, .unknownType, .validation, .authRequired, .authFailed, .authTimeout, .alreadyAuthenticated,
        .tooManyDevices, .rateLimited, .callingSelf, .callBusySelf, .sessionNotFound, .notAParty, .notReceiver,
        .notInitiator, .alreadyJoined, .notStarted, .callOngoing, .otherDevice, .terminated, .unavailable,
        .internalError,
    ]

    init(wall: @escaping @Sendable () -> Int64) {
        self.wall = wall
        errorsByCode = Dictionary(uniqueKeysWithValues: Self.knownCodes.map { ($0.rawValue, AtomicCounter()) })
    }

    /// It only counts what was committed.
    var records: Bool { false }

    func committed(_ changes: [CallChange]) {
        let now = wall()
        var counted: [TransitionKey: Int] = [:]
        for change in changes {
            // A ringing acknowledgement leaves the status as it was: placing
            // the call counted it already.
            if case .ringing = change.transition { continue }
            let call = change.after
            counted[TransitionKey(status: call.status, reason: call.endReason), default: 0] += 1
            if change.before?.status == .initiated, call.status == .ongoing, let acceptedAt = call.acceptedAt {
                ringSeconds.observe(Double(acceptedAt - call.initiatedAt) / 1000)
                setupSeconds.observe(Double(max(now, acceptedAt) - call.initiatedAt) / 1000)
            }
        }
        transitions.withLock { totals in
            for (key, count) in counted { totals[key, default: 0] += count }
        }
    }

    /// Counts an error result sent to a client.
    func countError(_ code: SignalErrorCode) {
        if let counter = errorsByCode[code.rawValue] {
            counter.increment()
        } else {
            otherErrors.withLock { $0[code.rawValue, default: 0] += 1 }
        }
    }

    /// Counts `frame` when it is an error result.
    func count(_ frame: ServerFrame) {
        if case .result(_, .failure(let error)) = frame { countError(error.code) }
    }

    var transitionTotals: [TransitionKey: Int] { transitions.withLock { $0 } }

    /// Every code counted so far (codes never sent are left out, as usual
    /// for labelled counters), sorted by code.
    var errorTotals: [(code: String, count: Int)] {
        var totals = errorsByCode.map { (code: $0.key, count: $0.value.value) }.filter { $0.count > 0 }
        totals += otherErrors.withLock { $0.map { (code: $0.key, count: $0.value) } }
        return totals.sorted { $0.code < $1.code }
    }

    /// Every loop's lag histogram, by loop index.
    var loopLagSeconds: [(loop: Int, histogram: Histogram)] {
        loopLag.withLock { $0.map { (loop: $0.key, histogram: $0.value) } }.sorted { $0.loop < $1.loop }
    }

    /// Probes `loop` every ``lagProbeInterval``: how much later than asked
    /// the timer ran is how long ready work kept the loop from it.
    func startLagProbe(on loop: EventLoop) {
        let histogram = Histogram(bounds: Histogram.shortSeconds)
        loopLag.withLock { $0[loop.index] = histogram }
        Self.probe(loop, into: histogram)
    }

    private static func probe(_ loop: EventLoop, into histogram: Histogram) {
        let asked = Deadline.now().adding(seconds: lagProbeInterval)
        loop.schedule(after: lagProbeInterval) {
            histogram.observe(max(0, Deadline.now().seconds(since: asked)))
            probe(loop, into: histogram)
        }
    }
}
