import SignalProtocol

extension CallStateMachine {
    /// The push side found nothing to ring the callee of `sessionId` with:
    /// it had no push token, or every push failed for good. With
    /// `calls.unreachable: fail` a call that still rings ends `unanswered`
    /// (`unreachable`), unless a callee device connected since or one said
    /// it shows the ring (it may ring through CallKit while its connection is
    /// gone). With `ring` it rings on until its deadline.
    public mutating func unreachable(sessionId: String, now: SignalingTime) -> SignalingOutput {
        var output = SignalingOutput()
        guard settings.unreachable == .fail, let call = liveCalls[sessionId], call.status == .initiated,
            call.ringingDevices.isEmpty, devices[call.receiver] == nil
        else { return output }
        _ = try? commit(.unreachable, to: call, by: .server, except: nil, now: now, into: &output)
        return output
    }

    /// Whether a call to `receiver` placed now cannot ring at all, so that
    /// `calls.unreachable: fail` places it ended: no device connected, and
    /// no push service that could wake one (with one, the push side tells,
    /// through ``unreachable(sessionId:now:)``).
    func isUnreachable(_ receiver: String) -> Bool {
        settings.unreachable == .fail && !settings.pushes && devices[receiver] == nil
    }
}
