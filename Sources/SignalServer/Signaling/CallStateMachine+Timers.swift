import SignalProtocol

extension CallStateMachine {
    /// A timer the machine scheduled is due. Stale timers (the call moved on,
    /// the user came back) change nothing.
    public mutating func timerFired(_ timer: SignalingTimer, now: Int64) -> SignalingOutput {
        var output = SignalingOutput()
        switch timer {
        case .ring(let sessionId):
            guard var call = liveCalls[sessionId], call.status == .initiated,
                  now >= call.initiatedAt + Int64(call.timeout) * 1000 else { return output }
            call.status = .unanswered
            call.endedAt = now
            call.endReason = .timeout
            commit(call, except: nil, into: &output)
        case .grace(let uid, let generation):
            guard graceGenerations[uid] == generation, devices[uid] == nil else { return output }
            graceGenerations[uid] = nil
            guard var call = liveCall(of: uid) else { return output }
            switch call.status {
            case .initiated where call.initiator == uid:
                call.status = .cancelled
            case .ongoing:
                call.status = .ended
            default:
                // A callee without devices keeps ringing until the ring timeout.
                return output
            }
            call.endedAt = now
            call.endReason = .connectionLost
            commit(call, except: nil, into: &output)
        }
        return output
    }

    /// The server stops: every ringing call is cancelled and every ongoing one
    /// ended, with `server_shutdown`, and every device is told.
    public mutating func shutdown(now: Int64) -> SignalingOutput {
        var output = SignalingOutput()
        for var call in liveCalls.values.sorted(by: { $0.initiatedAt < $1.initiatedAt }) {
            call.status = call.status == .ongoing ? .ended : .cancelled
            call.endedAt = now
            call.endReason = .serverShutdown
            commit(call, except: nil, into: &output)
        }
        return output
    }
}
