import SignalProtocol

extension CallStateMachine {
    /// A timer the machine scheduled is due. Stale timers (the call moved on,
    /// the user came back) change nothing; a ring timer that fires before its
    /// deadline (it never should: both are monotonic) is scheduled again.
    public mutating func timerFired(_ timer: SignalingTimer, now: SignalingTime) -> SignalingOutput {
        var output = SignalingOutput()
        switch timer {
        case .ring(let sessionId):
            guard let call = liveCalls[sessionId], call.status == .initiated, let deadline = ringDeadlines[sessionId]
            else {
                return output
            }
            guard now.monotonic >= deadline else {
                output.actions.append(.schedule(timer, at: deadline))
                return output
            }
            _ = try? commit(.timeOut, to: call, by: .server, except: nil, now: now, into: &output)
        case .grace(let uid, let generation):
            guard graceGenerations[uid] == generation, devices[uid] == nil else { return output }
            graceGenerations[uid] = nil
            guard let call = liveCall(of: uid) else { return output }
            // A callee without devices is rung until the ring timeout: the transition does not apply.
            _ = try? commit(.loseConnection(uid: uid), to: call, by: .server, except: nil, now: now, into: &output)
        }
        return output
    }

    /// After a commit failed: the live calls become exactly `calls`, what the
    /// store holds, keeping the devices. Ring timers are scheduled again for
    /// calls that ring (their deadline may have passed while the failed
    /// change was pending: the timer then fires at once), and a grace period
    /// starts for each party with no device and none running.
    public mutating func rebuild(from calls: [Call], now: SignalingTime) -> SignalingOutput {
        var output = SignalingOutput()
        continueSequence(after: lastSeq)
        for sessionId in ringDeadlines.keys.sorted() where !calls.contains(where: { $0.sessionId == sessionId }) {
            output.actions.append(.cancel(.ring(sessionId: sessionId)))
        }
        forgetLiveCalls()
        for call in calls {
            adopt(call, now: now)
            if let deadline = ringDeadlines[call.sessionId] {
                output.actions.append(.schedule(.ring(sessionId: call.sessionId), at: deadline))
            }
            for uid in [call.initiator, call.receiver] where devices[uid] == nil && graceGenerations[uid] == nil {
                startGrace(of: uid, now: now, into: &output)
            }
        }
        return output
    }
}
