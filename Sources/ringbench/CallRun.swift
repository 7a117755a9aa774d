import SignalProtocol
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

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
        /// With `--reconnect`: a party is not authenticated (yet, or again).
        case connecting
        /// With `--reconnect`: both parties are back, and the requests that
        /// end the call the server kept live for them are sent.
        case settling
        /// With `--reconnect`: a party could not connect within the window;
        /// the pair places no more calls.
        case down
    }
    var step = Step.idle
    var sessionID: String?
    var initiatedAt: UInt64 = 0
    var endSentAt: UInt64 = 0
    /// The call in flight, or still to be placed again, is one a lost
    /// connection interrupted (counted once, however many drops it meets).
    var interrupted = false
    /// Which placing of a call this is (its `initiateCall` is `i<attempt>`),
    /// so a result that comes after its call was given up on is known.
    var attempt: UInt64 = 0

    /// Whether a call of the pair is unfinished: in flight, or interrupted
    /// and not yet placed again.
    var hasCall: Bool {
        switch step {
        case .ringing, .ending: true
        case .connecting, .settling: interrupted
        case .idle, .down: false
        }
    }
}

extension Pair.Step {
    /// Whether the run's `callTimeout` bounds this step (the reconnect window bounds `connecting`).
    var isTimed: Bool { self == .ringing || self == .ending || self == .settling }
}

/// The counts of `--reconnect`.
struct ReconnectCounts {
    /// Connects the server refused (ECONNREFUSED).
    var refusedConnects = 0
    /// Connections opened again after a drop or a failed connect.
    var reconnects = 0
    /// Calls a lost connection interrupted before they completed.
    var interruptedCalls = 0
    /// Interrupted calls placed again that then completed (also in `completed`).
    var retriedCalls = 0
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
    /// With `--reconnect` only.
    var reconnect: ReconnectCounts?

    var failed: Int { failures.values.reduce(0, +) }
}

/// Drives the `calls` scenario on a ``ClientLoop``: open-loop slots at
/// `rate` spread round-robin over the pairs; each call is initiate → ring →
/// accept → ongoing → end → ended.
final class CallRun {
    /// The id of clean-up requests, whose results (often errors: the call
    /// already ended) are ignored.
    static let ignoredID = "x"
    let loop: ClientLoop
    let options: CallOptions
    var pairs: [Pair]
    var callers: [Peer] = []
    var results = CallResults()
    /// With `--reconnect` only, as is ``reconnector``.
    var callees: [Peer] = []
    var reconnector: Reconnector?
    /// The last call placed (see ``Pair/attempt``).
    var lastAttempt: UInt64 = 0

    init(options: CallOptions) throws {
        self.options = options
        loop = try ClientLoop(server: options.server, calleeServer: options.calleeServer)
        pairs = Array(repeating: Pair(), count: options.pairs)
    }

    /// Connects and authenticates every party; throws when any fails or it takes over 30 s.
    func connect() throws {
        let address = try SocketAddress.resolve(host: options.server.host, port: options.server.port)
        let calleeAddress =
            try options.calleeServer.map { try SocketAddress.resolve(host: $0.host, port: $0.port) } ?? address
        if options.reconnect { return try connectReconnecting(callers: address, callees: calleeAddress) }
        for index in 0 ..< options.pairs {
            try loop.connect(to: address, uid: "benchcaller\(index)", pair: index, isCaller: true)
            try loop.connect(to: calleeAddress, uid: "benchcallee\(index)", pair: index, isCaller: false)
        }
        callers = loop.peers.filter(\.isCaller)
        let deadline = monotonicNanos() + 30_000_000_000
        while loop.readyCount < loop.peers.count {
            if !loop.failures.isEmpty {
                throw RunError(message: "connecting: " + loop.failures.joined(separator: "; "))
            }
            if monotonicNanos() > deadline {
                throw RunError(message: "connecting: \(loop.readyCount) of \(loop.peers.count) ready after 30 s")
            }
            loop.poll(timeoutMS: 100)
        }
        finishLeftoverCalls()
        loop.onMessage = { [unowned self] peer, payload in handle(peer, payload) }
    }

    /// Ends calls an earlier run left live for these users (the server keeps
    /// them through its reconnect grace), so they do not fail as busy.
    private func finishLeftoverCalls() {
        let leftovers = loop.peers.compactMap { peer in peer.activeCall.map { (peer, $0.sessionId) } }
        guard !leftovers.isEmpty else { return }
        for (peer, session) in leftovers {
            let settle: ClientRequest =
                peer.isCaller
                ? .cancelCall(sessionId: session)
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
        if reconnector != nil { results.reconnect = ReconnectCounts() }
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
            if now >= loadEnd && !pairs.contains(where: \.hasCall) { break }
            if now >= loadEnd + UInt64(options.callTimeout * 1e9) { break }
            if let reconnector, now >= reconnector.nextDue { reconnector.tick(now: now) }
            while now < loadEnd, start + UInt64(Double(slot) * interval) <= now {
                fire(pair: slot % pairs.count, at: now)
                slot += 1
            }
            if now >= nextSweep {
                expire(now: now)
                nextSweep = now + 100_000_000
            }
            let nextSlot = start + UInt64(Double(slot) * interval)
            let wait = min(now < loadEnd ? min(nextSlot, nextSweep) : nextSweep, reconnector?.nextDue ?? .max)
            loop.poll(timeoutMS: Int32(clamping: wait > now ? (wait - now + 999_999) / 1_000_000 : 0))
        }
        results.loadSeconds = duration
        results.clientCPUMicros = processCPUMicros() - cpuBefore
        results.wireBytes = (loop.wireBytes.received - bytesBefore.received, loop.wireBytes.sent - bytesBefore.sent)
        for index in pairs.indices where pairs[index].hasCall { fail(pair: index, code: "ERR_BENCH_TIMEOUT") }
        results.connectionErrors = Array(loop.failures.dropFirst(failuresBefore))
        if let reconnector { reconnector.takeCounts(into: &results.reconnect) }
        return results
    }

    private func fire(pair index: Int, at now: UInt64) {
        guard pairs[index].step == .idle, callers[index].phase == .ready else {
            results.missedSlots += 1
            return
        }
        results.attempted += 1
        place(pair: index, at: now)
    }

    /// Sends the caller's `initiateCall`; `interrupted` when it places an interrupted call again.
    func place(pair index: Int, at now: UInt64, interrupted: Bool = false) {
        lastAttempt += 1
        pairs[index] = Pair(
            step: .ringing, sessionID: nil, initiatedAt: now, interrupted: interrupted, attempt: lastAttempt)
        loop.send(
            callers[index],
            ClientFrame(
                id: "i\(lastAttempt)",
                request: .initiateCall(
                    receiverId: "benchcallee\(index)", callType: .audio,
                    timeout: nil, metadata: nil)))
    }

    /// Counts calls stuck longer than `callTimeout` as failed and frees their
    /// pairs (a pair that is connecting again has the reconnect window instead).
    private func expire(now: UInt64) {
        let limit = UInt64(options.callTimeout * 1e9)
        for index in pairs.indices where pairs[index].step.isTimed && now - pairs[index].initiatedAt > limit {
            fail(pair: index, code: "ERR_BENCH_TIMEOUT")
        }
    }

    func handle(_ peer: Peer, _ frame: ServerFrame) {
        let index = peer.pair
        let now = monotonicNanos()
        let call: Call
        switch frame {
        case .result(let id, let outcome):
            if let id, id.hasPrefix("i"), let attempt = UInt64(id.dropFirst()) {
                return initiated(pair: index, attempt: attempt, outcome)
            }
            switch pairs[index].step {
            case .ringing, .ending:
                guard case .failure(let error) = outcome, id != Self.ignoredID else { return }
                return fail(pair: index, code: error.code.rawValue)
            case .settling where id == Self.settleID:
                return settled(pair: index, outcome)
            case .idle, .connecting, .settling, .down:
                return
            }
        case .call(let changed):
            call = changed
        case .signal:
            // The benchmark's calls carry no media.
            return
        }
        let session = call.sessionId, status = call.status
        var pair = pairs[index]
        switch (peer.isCaller, status, pair.step) {
        case (false, .initiated, .ringing) where pair.sessionID == nil || pair.sessionID == session:
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
            if pair.interrupted { results.reconnect?.retriedCalls += 1 }
            pair = Pair()
        case (false, _, _) where pair.sessionID == session && status != .ongoing:
            pairs[index] = pair
            return fail(pair: index, code: "UNEXPECTED_\(status.rawValue.uppercased())")
        default:
            return
        }
        pairs[index] = pair
    }

    /// The caller's `initiateCall` result. The current call learns its
    /// session id from it (when the callee has not rung yet); a call given
    /// up on before it came (a timeout) is cancelled on the server now, or
    /// it would ring on and make the pair's next call busy.
    private func initiated(pair index: Int, attempt: UInt64, _ outcome: Result<JSONValue, SignalError>) {
        let current = pairs[index].attempt == attempt && pairs[index].step == .ringing
        switch outcome {
        case .failure(let error):
            if current { fail(pair: index, code: error.code.rawValue) }
        case .success(let data):
            guard let session = data["call"]?["sessionId"]?.stringValue else { return }
            if current {
                if pairs[index].sessionID == nil { pairs[index].sessionID = session }
            } else if pairs[index].sessionID != session {
                loop.send(callers[index], ClientFrame(id: Self.ignoredID, request: .cancelCall(sessionId: session)))
                loop.send(callers[index], ClientFrame(id: Self.ignoredID, request: .endCall(sessionId: session)))
            }
        }
    }

    /// Records a failed call and leaves its pair free, cancelling or ending
    /// what the server may still hold (those results carry ``ignoredID``).
    func fail(pair index: Int, code: String) {
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
