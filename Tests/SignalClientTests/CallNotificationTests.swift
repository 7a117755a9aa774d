import SignalClient
import SignalProtocol
import TestSupport
import Testing

@Suite("CallNotification mapping", .prompt)
struct CallNotificationTests {
    private func call(_ status: CallStatus, acceptedBy: String? = nil) -> Call {
        Call(
            sessionId: "s", callType: .audio, status: status, initiator: "alice", receiver: "bob",
            initiatedAt: 1, acceptedBy: acceptedBy, timeoutMs: 45_000)
    }

    private func map(_ call: Call, _ uid: String, _ device: String = "d1") -> CallNotification? {
        CallNotification(call: call, uid: uid, deviceId: device)
    }

    @Test("initiated rings the receiver only")
    func initiated() {
        let ringing = call(.initiated)
        #expect(map(ringing, "bob") == .incomingCallReceived(ringing))
        #expect(map(ringing, "alice") == nil)
    }

    @Test("ongoing: accepted for the initiator, answered elsewhere for the receiver's other devices")
    func ongoing() {
        let accepted = call(.ongoing, acceptedBy: "phone")
        #expect(map(accepted, "alice", "laptop") == .outgoingCallAccepted(accepted))
        #expect(map(accepted, "bob", "tablet") == .incomingCallCancelled(accepted))
        #expect(map(accepted, "bob", "phone") == nil)
    }

    @Test(
        "rejected and busy: rejected for the initiator, stop ringing for the receiver's other devices",
        arguments: [CallStatus.rejected, .busy])
    func rejected(_ status: CallStatus) {
        let declined = call(status)
        #expect(map(declined, "alice") == .outgoingCallRejected(declined))
        #expect(map(declined, "bob") == .incomingCallCancelled(declined))
    }

    @Test("unanswered: rejected for the initiator, cancelled for the receiver")
    func unanswered() {
        let missed = call(.unanswered)
        #expect(map(missed, "alice") == .outgoingCallRejected(missed))
        #expect(map(missed, "bob") == .incomingCallCancelled(missed))
    }

    @Test("cancelled reaches the receiver only")
    func cancelled() {
        let gone = call(.cancelled)
        #expect(map(gone, "bob") == .incomingCallCancelled(gone))
        #expect(map(gone, "alice") == nil)
    }

    @Test("ended reaches both roles")
    func ended() {
        let over = call(.ended, acceptedBy: "phone")
        #expect(map(over, "alice") == .callEnded(over))
        #expect(map(over, "bob", "phone") == .callEnded(over))
        #expect(map(over, "bob", "tablet") == .callEnded(over))
    }

    @Test("a user who is not a party gets nothing", arguments: CallStatus.allCases)
    func stranger(_ status: CallStatus) {
        #expect(map(call(status, acceptedBy: "phone"), "carol") == nil)
    }

    @Test("the notification knows its call")
    func carriesCall() {
        let ringing = call(.initiated)
        #expect(map(ringing, "bob")?.call == ringing)
    }
}
