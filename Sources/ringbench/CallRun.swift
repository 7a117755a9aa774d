#if canImport(Glibc)
import Glibc
#endif
import SignalProtocol
import SignalSystem

/// Nanoseconds on the monotonic clock.
func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// This process's user + system CPU time in microseconds.
func processCPUMicros() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
    return user + Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
}

/// One caller/callee pair and the call it has in flight.
struct Pair {
    /// Where the pair's current call is.
    enum Step {
        /// No call in flight: the pair may take its next slot.
        case idle
        /// `initiateCall` is sent; the caller waits for `ongoing`.
        case ringing
        /// `endCall` is sent; the callee waits for `ended`.
        case ending
    }
    var step = Step.idle
    var sessionID: String?
    var initiatedAt: UInt64 = 0
    var endSentAt: UInt64 = 0
}

/// What a run measured: counts and the three latency series, in nanoseconds.
struct CallResults {
    var attempted = 0
    var completed = 0
    var missedSlots = 0
    var failures: [String: Int] = [:]
    var ring: [UInt64] = []
    var setup: [UInt64] = []
    var teardown: [UInt64] = []
    var loadSeconds = 0.0
    /// ringbench's own CPU time (user + system) over the load, in microseconds.
    var clientCPUMicros = 0.0
    /// Bytes the clients received from and sent to the server during the run.
    var wireBytes = (received: 0, sent: 0)
    var connectionErrors: [String] = []

    var failed: Int { failures.values.reduce(0, +) }
}

/// Drives the `calls` scenario on a ``ClientLoop``: open-loop slots at
/// `rate` spread round-robin over the pairs; each call is initiate → ring →
/// accept → ongoing → end → ended.
final class CallRun {
    /// The id of clean-up requests, whose results (often errors: the call
    /// already ended) are ignored.
    private static let ignoredID = "x"
    private let loop: ClientLoop
    private let options: CallOptions
    private var pairs: [Pair]
    private var callers: [Peer] = []
    private var results = CallResults()

    init(options: CallOptions) throws {
        self.options = options
        loop = try ClientLoop(server: options.server)
        pairs = Array(repeating: Pair(), count: options.pairs)
    }

    /// Connects and authenticates every party; throws when any fails or it takes over 30 s.
    func connect() throws {
        let address = try SocketAddress.resolve(host: options.server.host, port: options.server.port)
        for index in 0..<options.pairs {
            try loop.connect(to: address, uid: "benchcaller\(index)", pair: index, isCaller: true)
            try loop.connect(to: address, uid: "benchcallee\(index)", pair: index, isCaller: false)
        }
        callers = loop.peers.filter(\.isCaller)
        let deadline = monotonicNanos() + 30_000_000_000
        while loop.readyCount < loop.peers.count {
            if !loop.failures.isEmpty { throw RunError(message: "connecting: " + loop.failures.joined(separator: "; ")) }
            if monotonicNanos() > deadline { throw RunError(message: "connecting: \(loop.readyCount) of \(loop.peers.count) ready after 30 s") }
            loop.poll(timeoutMS: 100)
        }
        finishLeftoverCalls()
        loop.onMessage = { [unowned self] peer, payload in handle(peer, payload) }
    }

    /// Ends calls an earlier run left live for these users (the server keeps
    /// them through its reconnect grace), so they do not fail as busy.
    private func finishLeftoverCalls() {
        let leftovers = loop.peers.filter { $0.leftoverSession != nil }
        guard !leftovers.isEmpty else { return }
        for peer in leftovers {
            let session = peer.leftoverSession!
            let settle: ClientRequest = peer.isCaller ? .cancelCall(sessionId: session)
                : .rejectCall(sessionId: session, status: .rejected)
            loop.send(peer, ClientFrame(id: Self.ignoredID, request: settle))
            loop.send(peer, ClientFrame(id: Self.ignoredID, request: .endCall(sessionId: session)))
        }
        let deadline = monotonicNanos() + 500_000_000
        while monotonicNanos() < deadline { loop.poll(timeoutMS: 50) }
    }

    /// Offers `rate` calls/s for `duration` seconds, then waits up to
    /// `callTimeout` for the calls in flight, so every pair is idle again when
    /// it returns; calls that did not finish count as `ERR_BENCH_TIMEOUT`.
    func run(rate: Double, duration: Double) -> CallResults {
        results = CallResults()
        let failuresBefore = loop.failures.count
        let cpuBefore = processCPUMicros()
        let bytesBefore = loop.wireBytes
        let start = monotonicNanos()
        let interval = 1e9 / rate
        let loadEnd = start + UInt64(duration * 1e9)
        var slot = 0
        var nextSweep = start
        while true {
            let now = monotonicNanos()
            if now >= loadEnd && !pairs.contains(where: { $0.step != .idle }) { break }
            if now >= loadEnd + UInt64(options.callTimeout * 1e9) { break }
            while now < loadEnd, start + UInt64(Double(slot) * interval) <= now {
                fire(pair: slot % pairs.count, at: now)
                slot += 1
            }
            if now >= nextSweep {
                expire(now: now)
                nextSweep = now + 100_000_000
            }
            let nextSlot = start + UInt64(Double(slot) * interval)
            let wait = now < loadEnd ? min(nextSlot, nextSweep) : nextSweep
            loop.poll(timeoutMS: Int32(clamping: wait > now ? (wait - now + 999_999) / 1_000_000 : 0))
        }
        results.loadSeconds = duration
        results.clientCPUMicros = processCPUMicros() - cpuBefore
        results.wireBytes = (loop.wireBytes.received - bytesBefore.received, loop.wireBytes.sent - bytesBefore.sent)
        for index in pairs.indices where pairs[index].step != .idle { fail(pair: index, code: "ERR_BENCH_TIMEOUT") }
        results.connectionErrors = Array(loop.failures.dropFirst(failuresBefore))
        return results
    }

    private func fire(pair index: Int, at now: UInt64) {
        guard pairs[index].step == .idle, callers[index].phase == .ready else {
            results.missedSlots += 1
            return
        }
        results.attempted += 1
        pairs[index] = Pair(step: .ringing, sessionID: nil, initiatedAt: now)
        loop.send(callers[index], ClientFrame(id: "i", request: .initiateCall(receiverId: "benchcallee\(index)", callType: .audio,
                                                                       timeout: nil, metadata: nil)))
    }

    /// Counts calls stuck longer than `callTimeout` as failed and frees their pairs.
    private func expire(now: UInt64) {
        let limit = UInt64(options.callTimeout * 1e9)
        for index in pairs.indices where pairs[index].step != .idle && now - pairs[index].initiatedAt > limit {
            fail(pair: index, code: "ERR_BENCH_TIMEOUT")
        }
    }

    private func handle(_ peer: Peer, _ frame: ServerFrame) {
        let index = peer.pair
        let now = monotonicNanos()
        let call: Call
        switch frame {
        case .result(let id, .failure(let error)):
            guard pairs[index].step != .idle, id != Self.ignoredID else { return }
            return fail(pair: index, code: error.code.rawValue)
        case .result:
            return
        case .call(let changed):
            call = changed
        }
        let session = call.sessionId, status = call.status
        var pair = pairs[index]
        switch (peer.isCaller, status, pair.step) {
        case (false, .initiated, .ringing) where pair.sessionID == nil:
            pair.sessionID = session
            results.ring.append(now - pair.initiatedAt)
            loop.send(peer, ClientFrame(id: "c", request: .acceptCall(sessionId: session)))
        case (true, .ongoing, .ringing) where pair.sessionID == session:
            results.setup.append(now - pair.initiatedAt)
            pair.step = .ending
            pair.endSentAt = monotonicNanos()
            loop.send(peer, ClientFrame(id: "e", request: .endCall(sessionId: session)))
        case (false, .ended, .ending) where pair.sessionID == session:
            results.teardown.append(now - pair.endSentAt)
            results.completed += 1
            pair = Pair()
        case (false, _, _) where pair.sessionID == session && status != .ongoing:
            pairs[index] = pair
            return fail(pair: index, code: "UNEXPECTED_\(status.rawValue.uppercased())")
        default:
            return
        }
        pairs[index] = pair
    }

    /// Records a failed call and leaves its pair free, cancelling or ending
    /// what the server may still hold (those results carry ``ignoredID``).
    private func fail(pair index: Int, code: String) {
        results.failures[code, default: 0] += 1
        if let session = pairs[index].sessionID {
            loop.send(callers[index], ClientFrame(id: Self.ignoredID, request: .cancelCall(sessionId: session)))
            loop.send(callers[index], ClientFrame(id: Self.ignoredID, request: .endCall(sessionId: session)))
        }
        pairs[index] = Pair()
    }
}

/// A run that could not start or finish.
struct RunError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
