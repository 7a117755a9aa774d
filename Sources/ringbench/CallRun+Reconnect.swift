import SignalProtocol
import SignalSystem

/// `--reconnect`: a pair whose party drops, or whose connect fails, waits
/// until both parties are authenticated again, ends the call the server
/// kept live for them (a restarted ringd restores live calls; the auth
/// result's `activeCall` names it), then places its interrupted call again.
/// Ending it rather than carrying it on keeps the counts plain: every
/// interrupted call is placed again from its start, and completes or fails.
extension CallRun {
    /// Every party is a user of its own, so one device id serves them all;
    /// the same one on every connection makes a reconnect the same device.
    static let deviceID = "ringbench"
    /// The id of the `endCall` that settles a pair; its result, the last of
    /// the pair's settling requests, says the call is no longer live.
    static let settleID = "s"

    /// Reserves every party's slot and connects them, a failed connect
    /// retried like a lost connection; a pair settles (ends a call an
    /// earlier run left live) as it does after a reconnect. Throws when a
    /// party is not connected within the reconnect window, or after 30 s.
    func connectReconnecting(callers callerAddress: SocketAddress, callees calleeAddress: SocketAddress) throws {
        let reconnector = Reconnector(loop: loop, callers: callerAddress, callees: calleeAddress)
        self.reconnector = reconnector
        reconnector.onGiveUp = { [unowned self] peer in gaveUp(peer) }
        loop.onClosed = { [unowned self] peer in lost(peer) }
        loop.onReady = { [unowned self] peer in back(peer) }
        loop.onMessage = { [unowned self] peer, frame in handle(peer, frame) }
        for index in pairs.indices {
            pairs[index].step = .connecting
            callers.append(
                loop.reserve(uid: "benchcaller\(index)", pair: index, isCaller: true, deviceId: Self.deviceID))
            callees.append(
                loop.reserve(uid: "benchcallee\(index)", pair: index, isCaller: false, deviceId: Self.deviceID))
        }
        for peer in loop.peers { reconnector.start(peer) }
        let deadline = monotonicNanos() + 30_000_000_000
        while pairs.contains(where: { $0.step != .idle }) {
            if let down = pairs.firstIndex(where: { $0.step == .down }) {
                throw RunError(
                    message: "connecting: pair \(down) not connected within 10 s: "
                        + loop.failures.suffix(4).joined(separator: "; "))
            }
            let now = monotonicNanos()
            if now > deadline {
                throw RunError(message: "connecting: \(loop.readyCount) of \(loop.peers.count) ready after 30 s")
            }
            if now >= reconnector.nextDue { reconnector.tick(now: now) }
            let wait = min(reconnector.nextDue, now + 100_000_000)
            loop.poll(timeoutMS: Int32(clamping: wait > now ? (wait - now + 999_999) / 1_000_000 : 0))
        }
    }

    /// A party dropped or its connect failed: its pair waits for it, and a
    /// call the pair had in flight is interrupted.
    func lost(_ peer: Peer) {
        guard let reconnector, pairs[peer.pair].step != .down else { return }
        reconnector.lost(peer, now: monotonicNanos())
        var pair = pairs[peer.pair]
        switch pair.step {
        case .ringing, .ending:
            if !pair.interrupted { results.reconnect?.interruptedCalls += 1 }
            pair = Pair(step: .connecting, interrupted: true)
        case .idle, .settling:
            pair.step = .connecting
        case .connecting, .down:
            return
        }
        pairs[peer.pair] = pair
    }

    /// A party is authenticated (again). Once both are, the pair ends the
    /// call the latest auth result reports live (the earlier one may be
    /// stale), with `cancelCall` and `endCall`: one of them applies.
    func back(_ peer: Peer) {
        guard let reconnector else { return }
        reconnector.ready(peer)
        let index = peer.pair
        if peer.isCaller { callers[index] = peer } else { callees[index] = peer }
        guard pairs[index].step == .connecting, callers[index].phase == .ready, callees[index].phase == .ready else {
            return
        }
        guard let live = peer.activeCall else { return settled(index) }
        pairs[index].step = .settling
        pairs[index].initiatedAt = monotonicNanos()
        loop.send(callers[index], ClientFrame(id: Self.ignoredID, request: .cancelCall(sessionId: live.sessionId)))
        loop.send(callers[index], ClientFrame(id: Self.settleID, request: .endCall(sessionId: live.sessionId)))
    }

    /// The settling `endCall` was answered: it ended the call, or the call
    /// had ended (cancelled, or ended while the party was away). Any other
    /// answer leaves it live, and fails the pair's call.
    func settled(pair index: Int, _ outcome: Result<JSONValue, SignalError>) {
        if case .failure(let error) = outcome, error.code != .terminated, error.code != .sessionNotFound {
            return fail(pair: index, code: error.code.rawValue)
        }
        settled(index)
    }

    private func settled(_ index: Int) {
        if pairs[index].interrupted {
            place(pair: index, at: monotonicNanos(), interrupted: true)
        } else {
            pairs[index] = Pair()
        }
    }

    /// A party was not connected again within the window: the pair's
    /// unfinished call fails, and the pair places no more calls.
    func gaveUp(_ peer: Peer) {
        if pairs[peer.pair].hasCall { fail(pair: peer.pair, code: "ERR_BENCH_RECONNECT") }
        pairs[peer.pair].step = .down
    }
}
