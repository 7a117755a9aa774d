import RingCallKit
import SignalProtocol

/// ringd's answers to one device's requests, as docs/PROTOCOL.md
/// ("Semantics", "Ringing acknowledgements") states them: enough of the
/// call rules to answer the coordinator's requests as the real server would.
/// (The real server's rules are tested in SignalCoreTests; here they only
/// need to be the documented ones.)
enum ServerModel {
    enum Result {
        case success(Call)
        case failure(String)
    }

    static func result(
        of command: ServerCommand, in calls: inout [String: Call], deviceId: String, placed: inout Int,
        clock: TestClock
    ) -> Result {
        if case .initiateCall(let to, let type, let clientCallId) = command {
            if let retried = calls.values.first(where: { $0.clientCallId == clientCallId }) {
                return .success(retried)
            }
            // Glare: the callee's call to this user still rings; ringd
            // accepts it on this device's behalf instead of placing another.
            if var theirs = calls.values.first(where: {
                $0.initiator == to && $0.receiver == CallKitHarness.uid && $0.status == .initiated
            }) {
                theirs.status = .ongoing
                theirs.acceptedBy = deviceId
                theirs.acceptedAt = clock.now
                calls[theirs.sessionId] = theirs
                return .success(theirs)
            }
            placed += 1
            let sessionId = String(repeating: "0", count: 31) + String(placed)
            let call = Call(
                sessionId: sessionId, callType: type, status: .initiated, initiator: CallKitHarness.uid,
                receiver: to, initiatorDevice: deviceId, initiatedAt: clock.now, timeoutMs: 30_000,
                clientCallId: clientCallId)
            calls[sessionId] = call
            return .success(call)
        }
        guard let sessionId = command.sessionId, var call = calls[sessionId] else {
            return .failure("ERR_CALL_SESSION_NOT_FOUND")
        }
        if call.status.isTerminal { return .failure("ERR_CALL_TERMINATED") }
        switch command {
        case .ringing:
            guard call.status == .initiated else { return .failure("ERR_CALL_USER_ALREADY_JOINED") }
            if !call.ringingDevices.contains(deviceId) { call.ringingDevices.append(deviceId) }
        case .acceptCall:
            guard call.status == .initiated else { return .failure("ERR_CALL_USER_ALREADY_JOINED") }
            call.status = .ongoing
            call.acceptedBy = deviceId
            call.acceptedAt = clock.now
        case .rejectCall(_, let reason):
            guard call.status == .initiated else { return .failure("ERR_CALL_ONGOING") }
            call.status = .rejected
            call.endReason = .rejected
            call.endedBy = CallKitHarness.uid
            call.rejectReason = reason
        case .cancelCall:
            guard call.status == .initiated else { return .failure("ERR_CALL_ONGOING") }
            call.status = .cancelled
            call.endReason = .cancelled
            call.endedBy = CallKitHarness.uid
        case .endCall:
            guard call.status == .ongoing else { return .failure("ERR_CALL_NOT_STARTED") }
            call.status = .ended
            call.endReason = .hangup
            call.endedBy = CallKitHarness.uid
        case .initiateCall:
            break
        }
        calls[sessionId] = call
        return .success(call)
    }
}
