import SignalProtocol

extension CallStateMachine {
    /// The server stops: every ringing call is cancelled and every ongoing one
    /// ended, with `server_shutdown`, and every device is told.
    public mutating func shutdown(now: SignalingTime) -> SignalingOutput {
        endEveryLiveCall(.shutDown, now: now)
    }

    /// The server starts on a store that holds `calls` as live (a crash left
    /// them) and must not keep them (`calls.onRestart: end`): each ends with
    /// `server_restart`. Nobody is connected yet, so the output is only the
    /// changes to commit, and the restart grace deadlines an earlier
    /// `resume` start left (`graceDeadlines`) dropped.
    public mutating func restart(
        with calls: [Call], graceDeadlines: [String: Int64] = [:],
        now: SignalingTime
    ) -> SignalingOutput {
        restartGraceDeadlines = graceDeadlines
        for call in calls { adopt(call, now: now) }
        var output = endEveryLiveCall(.restart, now: now)
        for uid in restartGraceDeadlines.keys.sorted() { endRestartGrace(of: uid, into: &output) }
        return output
    }

    /// The server starts on a store that holds `calls` as live and keeps
    /// them (`calls.onRestart: resume`), before anyone connects. A ringing
    /// call whose deadline passed while the server was away ends
    /// `unanswered` at that deadline; the others ring on until theirs. Each
    /// party gets the restart grace to come back: until the deadline an
    /// earlier start gave it (`graceDeadlines`, wall clock, from the store),
    /// so that restarting again never extends it, or else from `now`.
    /// Ringing calls are pushed again when pushes are on.
    /// Deadlines of parties without a live call any more are dropped.
    public mutating func restore(
        _ calls: [Call], graceDeadlines: [String: Int64], now: SignalingTime
    ) -> SignalingOutput {
        var output = SignalingOutput()
        restartGraceDeadlines = graceDeadlines
        for call in calls { adopt(call, now: now) }
        for call in calls where call.status == .initiated && call.ringDeadline <= now.wall {
            let atDeadline = SignalingTime(wall: call.ringDeadline, monotonic: now.monotonic)
            _ = try? commit(.timeOut, to: call, by: .server, except: nil, now: atDeadline, into: &output)
        }
        for (sessionId, deadline) in ringDeadlines.sorted(by: { $0.key < $1.key }) {
            output.actions.append(.schedule(.ring(sessionId: sessionId), at: deadline))
            // The previous run may have died before its pushes left: the
            // callee's devices are pushed again (apps match pushes by session id).
            if settings.pushes, let call = liveCalls[sessionId] { output.actions.append(.push(call, connected: [])) }
        }
        let parties = Set(liveCalls.values.flatMap { [$0.initiator, $0.receiver] })
        for uid in graceDeadlines.keys.sorted() where !parties.contains(uid) { endRestartGrace(of: uid, into: &output) }
        for uid in parties.sorted() {
            let deadline: Int64
            if let kept = graceDeadlines[uid] {
                deadline = kept
            } else {
                deadline = now.wall + settings.restartGraceMillis
                restartGraceDeadlines[uid] = deadline
                output.restartGrace.append(.set(uid: uid, deadline: deadline))
            }
            startGrace(of: uid, now: now, until: now.monotonic(atWall: deadline), into: &output)
        }
        return output
    }

    private mutating func endEveryLiveCall(_ transition: CallTransition, now: SignalingTime) -> SignalingOutput {
        var output = SignalingOutput()
        for call in liveCalls.values.sorted(by: { ($0.initiatedAt, $0.sessionId) < ($1.initiatedAt, $1.sessionId) }) {
            _ = try? commit(transition, to: call, by: .server, except: nil, now: now, into: &output)
        }
        return output
    }
}
