import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// `acceptCall`, `rejectCall` and `cancelCall` on a ringing call.
@Suite(.blocking) struct CallStateMachineAnswerTests {
    @Test func acceptMakesTheCallOngoingAndTellsEveryOtherDevice() throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.advance(by: 3_000)
        let output = h.accept(id, by: b2)
        let call = try #require(output.resultCall(to: b2))
        #expect(call.sessionId == id)
        #expect(call.status == .ongoing)
        #expect(call.acceptedBy == "b-laptop")
        #expect(call.acceptedAt == MachineHarness.start + 3_000)
        #expect(call.endedAt == nil && call.endReason == nil && call.endedBy == nil)
        #expect(output.eventAddresses == addresses(a1, a2, b1))
        #expect(output.events.count == 3)
        #expect(output.events.allSatisfy { $0.call == call })
        #expect(output.saves == [call])
        #expect(output.schedules.isEmpty)
        #expect(h.live("alice") == call)
    }

    @Test func racingCalleeDevicesFirstWinsSecondIsAlreadyJoined() throws {
        let h = MachineHarness()
        let a1 = h.online("alice", "a-phone")
        let a2 = h.online("alice", "a-laptop")
        let b1 = h.online("bob", "b-phone")
        let b2 = h.online("bob", "b-laptop")
        let b3 = h.online("bob", "b-tablet")
        let id = h.ring(from: a1, to: "bob")
        h.advance(by: 1_000)

        let first = h.accept(id, by: b2)
        let second = h.accept(id, by: b1)

        let winner = try #require(first.resultCall(to: b2))
        #expect(winner.status == .ongoing)
        #expect(winner.acceptedBy == "b-laptop")
        #expect(winner.acceptedAt == h.now)
        #expect(second.errorCode(to: b1) == .alreadyJoined)
        #expect(second.saves.isEmpty)
        #expect(second.events.isEmpty)
        #expect(first.saves == [winner])

        // Every other device of both parties, the loser included, gets exactly one ongoing event.
        var both = first
        both.append(second)
        for device in [a1, a2, b1, b3] {
            #expect(both.events(to: device) == [winner])
        }
        #expect(both.events(to: b2).isEmpty)
        #expect(h.live("bob")?.acceptedBy == "b-laptop")
    }

    @Test func initiatorCannotAccept() {
        let (h, a1, a2, _, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        for device in [a1, a2] {
            let output = h.accept(id, by: device)
            #expect(output.errorCode(to: device) == .notReceiver)
            #expect(output.saves.isEmpty && output.events.isEmpty)
        }
        #expect(h.live("alice")?.status == .initiated)
    }

    @Test func acceptingAnOngoingCallAgainIsAlreadyJoined() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.accept(id, by: b1)
        h.advance(by: 500)
        let again = h.accept(id, by: b1)
        #expect(again.errorCode(to: b1) == .alreadyJoined)
        #expect(again.saves.isEmpty)
        #expect(h.live("bob")?.acceptedAt == MachineHarness.start)
    }

    @Test(arguments: [(CallStatus.rejected, EndReason.rejected), (.busy, .busy)])
    func receiverDeclines(status: CallStatus, reason: EndReason) throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.advance(by: 4_000)
        let output = h.reject(id, by: b1, status: status)
        let call = try #require(output.resultCall(to: b1))
        #expect(call.sessionId == id)
        #expect(call.status == status)
        #expect(call.endReason == reason)
        #expect(call.endedBy == "bob")
        #expect(call.endedAt == MachineHarness.start + 4_000)
        #expect(call.acceptedAt == nil && call.acceptedBy == nil)
        #expect(output.eventAddresses == addresses(a1, a2, b2))
        #expect(output.events.count == 3)
        #expect(output.events.allSatisfy { $0.call == call })
        #expect(output.saves == [call])
        #expect(h.live("alice") == nil)
        #expect(h.live("bob") == nil)
        #expect(h.machine.liveCalls.isEmpty)
    }

    /// The callee's words reach the caller's devices with the call, and are
    /// saved with it; a decline without them leaves none.
    @Test(arguments: [CallStatus.rejected, .busy])
    func aDeclineCarriesItsReason(status: CallStatus) throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        let output = h.reject(id, by: b1, status: status, reason: "Can't talk, in a meeting 📅")
        let call = try #require(output.resultCall(to: b1))
        #expect(call.status == status && call.rejectReason == "Can't talk, in a meeting 📅")
        #expect(output.events.allSatisfy { $0.call.rejectReason == call.rejectReason })
        #expect(output.saves == [call])
        let other = h.ring(from: a1, to: "bob")
        #expect(try #require(h.reject(other, by: b1).resultCall(to: b1)).rejectReason == nil)
    }

    @Test func callerRejectingWithCancelledCancels() throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        let output = h.reject(id, by: a2, status: .cancelled)
        let call = try #require(output.resultCall(to: a2))
        #expect(call.status == .cancelled)
        #expect(call.endReason == .cancelled)
        #expect(call.endedBy == "alice")
        #expect(output.eventAddresses == addresses(a1, b1, b2))
        #expect(output.saves == [call])
        #expect(h.live("bob") == nil)
    }

    @Test(arguments: [CallStatus.rejected, .busy])
    func callerCannotReject(status: CallStatus) {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        let output = h.reject(id, by: a1, status: status)
        #expect(output.errorCode(to: a1) == .notReceiver)
        #expect(output.saves.isEmpty && output.events.isEmpty)
        #expect(h.live("bob")?.status == .initiated)
    }

    @Test func receiverRejectingWithCancelledIsInvalid() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        let output = h.reject(id, by: b1, status: .cancelled)
        #expect(output.errorCode(to: b1) == .validation)
        #expect(output.saves.isEmpty && output.events.isEmpty)
        #expect(h.live("bob")?.status == .initiated)
    }

    /// `rejectCall` only takes rejected, busy or cancelled; the parser enforces
    /// it, but the machine's public `handle` must not let any other status
    /// through (it would write e.g. an "ongoing" call with an endReason).
    @Test(arguments: [CallStatus.initiated, .ongoing, .ended, .unanswered])
    func receiverRejectingWithAnotherStatusIsInvalid(status: CallStatus) {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        let output = h.reject(id, by: b1, status: status)
        #expect(output.errorCode(to: b1) == .validation)
        #expect(output.saves.isEmpty)
        #expect(h.live("bob")?.status == .initiated)
        #expect(h.live("bob")?.endReason == nil)
    }

    @Test func anyCallerDeviceCancels() throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.advance(by: 2_500)
        let output = h.cancel(id, by: a2)
        let call = try #require(output.resultCall(to: a2))
        #expect(call.status == .cancelled)
        #expect(call.endReason == .cancelled)
        #expect(call.endedBy == "alice")
        #expect(call.endedAt == MachineHarness.start + 2_500)
        #expect(output.eventAddresses == addresses(a1, b1, b2))
        #expect(output.events.count == 3)
        #expect(output.saves == [call])
        #expect(h.live("alice") == nil)
    }

    @Test func receiverCannotCancel() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        let output = h.cancel(id, by: b1)
        #expect(output.errorCode(to: b1) == .notInitiator)
        #expect(output.saves.isEmpty && output.events.isEmpty)
        #expect(h.live("alice")?.status == .initiated)
    }

    @Test func rejectingOrCancellingAnOngoingCallIsCallOngoing() {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.accept(id, by: b1)
        let attempts: [(SignalingOutput, Device)] = [
            (h.reject(id, by: b2, status: .rejected), b2),
            (h.reject(id, by: b1, status: .busy), b1),
            (h.reject(id, by: a1, status: .cancelled), a1),
            (h.cancel(id, by: a2), a2),
        ]
        for (output, device) in attempts {
            #expect(output.errorCode(to: device) == .callOngoing)
            #expect(output.saves.isEmpty && output.events.isEmpty)
        }
        #expect(h.live("alice")?.status == .ongoing)
    }
}

/// `endCall`, `getActiveCall`, and refusals shared by every call request.
@Suite(.blocking) struct CallStateMachineRequestTests {
    @Test(arguments: ["alice", "bob"])
    func eitherPartyHangsUp(uid: String) throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.advance(by: 3_000)
        h.accept(id, by: b1)
        h.advance(by: 62_000)
        let actor = uid == "alice" ? a2 : b2
        let output = h.end(id, by: actor)
        let call = try #require(output.resultCall(to: actor))
        #expect(call.status == .ended)
        #expect(call.endReason == .hangup)
        #expect(call.endedBy == uid)
        #expect(call.acceptedAt == MachineHarness.start + 3_000)
        #expect(call.endedAt == MachineHarness.start + 65_000)
        #expect(output.resultData(to: actor)?["call"]?["durationMs"] == .integer(62_000))
        #expect(output.eventAddresses == addresses(a1, a2, b1, b2).subtracting([actor.address]))
        #expect(output.events.count == 3)
        #expect(output.saves == [call])
        #expect(h.machine.liveCalls.isEmpty)
    }

    @Test func endingARingingCallIsNotStarted() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        for device in [a1, b1] {
            let output = h.end(id, by: device)
            #expect(output.errorCode(to: device) == .notStarted)
            #expect(output.saves.isEmpty && output.events.isEmpty)
        }
        #expect(h.live("alice")?.status == .initiated)
    }

    @Test func aThirdUserIsNotAParty() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        let id = h.ring(from: a1, to: "bob")
        let ringing: [ClientRequest] = [
            .acceptCall(sessionId: id), .rejectCall(sessionId: id, status: .rejected),
            .cancelCall(sessionId: id), .endCall(sessionId: id),
        ]
        for request in ringing {
            let output = h.send(request, from: carol)
            #expect(output.errorCode(to: carol) == .notAParty, "\(request.type)")
            #expect(output.saves.isEmpty && output.events.isEmpty)
        }
        h.accept(id, by: b1)
        #expect(h.end(id, by: carol).errorCode(to: carol) == .notAParty)
        #expect(h.live("alice")?.status == .ongoing)
    }

    @Test func unregisteredDevicesMustAuthenticate() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        let stranger = h.newDevice("bob", "b-watch")
        let gone = h.online("bob", "b-tv")
        h.disconnect(gone)
        // Right uid and device id, wrong address.
        let impostor = Device(uid: "bob", deviceId: b1.deviceId, address: DeviceAddress(loop: 9, connection: 999))
        for device in [stranger, gone, impostor] {
            for request: ClientRequest in [
                .acceptCall(sessionId: id), .getActiveCall,
                .initiateCall(receiverId: "carol", callType: .audio, timeout: nil, metadata: nil),
            ] {
                let output = h.send(request, from: device)
                #expect(output.errorCode(to: device) == .authRequired)
                #expect(output.saves.isEmpty && output.events.isEmpty && output.resolutions.isEmpty)
            }
        }
        #expect(h.live("bob")?.status == .initiated)
        #expect(h.live("carol") == nil)
    }

    @Test func requestsOnATerminalCallAreResolvedByTheStore() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        let id = h.ring(from: a1, to: "bob")
        h.reject(id, by: b1)
        let requests: [(ClientRequest, Device)] = [
            (.acceptCall(sessionId: id), b1), (.rejectCall(sessionId: id, status: .busy), b1),
            (.cancelCall(sessionId: id), a1), (.endCall(sessionId: id), a1), (.endCall(sessionId: id), carol),
        ]
        for (request, device) in requests {
            let output = h.send(request, from: device, id: "q-\(request.type)")
            #expect(output.replies.isEmpty, "\(request.type)")
            #expect(output.resolutions.count == 1)
            #expect(output.resolutions.first?.address == device.address)
            #expect(output.resolutions.first?.id == "q-\(request.type)")
            #expect(output.resolutions.first?.sessionId == id)
            #expect(output.resolutions.first?.uid == device.uid)
            #expect(output.saves.isEmpty && output.events.isEmpty)
        }
    }

    @Test func requestsOnAnUnknownSessionAreResolvedByTheStore() {
        let (h, _, _, b1, _) = MachineHarness.aliceAndBob()
        let output = h.send(.acceptCall(sessionId: "nope"), from: b1, id: "x")
        #expect(output.replies.isEmpty)
        #expect(output.resolutions.map(\.sessionId) == ["nope"])
        #expect(output.resolutions.map(\.uid) == ["bob"])
        #expect(output.actions.count == 1)
    }

    @Test func getActiveCallReturnsTheLiveCallOrNull() throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        #expect(h.send(.getActiveCall, from: a1).resultData(to: a1) == .object([("call", .null)]))

        let id = h.ring(from: a1, to: "bob")
        let live = try #require(h.live("alice"))
        for device in [a1, b1] {
            let output = h.send(.getActiveCall, from: device)
            #expect(output.resultData(to: device) == .object([("call", live.json)]))
            #expect(output.saves.isEmpty && output.events.isEmpty)
        }
        #expect(h.send(.getActiveCall, from: carol).resultData(to: carol) == .object([("call", .null)]))

        h.accept(id, by: b1)
        #expect(h.send(.getActiveCall, from: a1).resultCall(to: a1)?.status == .ongoing)
        h.end(id, by: a1)
        #expect(h.send(.getActiveCall, from: b1).resultData(to: b1) == .object([("call", .null)]))
    }

    @Test func nonCallRequestsAreBadRequests() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let output = h.send(.getCallLogs(CallLogFilter()), from: a1)
        #expect(output.errorCode(to: a1) == .badRequest)
        #expect(output.saves.isEmpty)
    }
}
