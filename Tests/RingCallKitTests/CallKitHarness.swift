import RingCallKit
import SignalProtocol
import Synchronization

/// What the recording fake of CallKit saw, in order.
enum ProviderEvent: Hashable, Sendable {
    case reported(IncomingCallReport)
    case ended(CallUUID, CallEndedReason)
    case connecting(CallUUID)
    case connected(CallUUID)
    case fulfilled(ProviderAction)
    case failed(ProviderAction)
}

/// What the app's delegate was told.
enum AppEvent: Hashable, Sendable {
    case presented(sessionId: String, status: CallStatus)
    case ended(sessionId: String?, CallEndCause)
    case muted(sessionId: String, Bool)
}

/// Unix milliseconds the test moves by hand.
final class TestClock: Sendable {
    private let value = Mutex<Int64>(1_764_466_800_000)
    var now: Int64 { value.withLock { $0 } }
    func advance(by ms: Int64) { value.withLock { $0 += ms } }
}

/// The coordinator driven as the Apple adapter drives it, against fakes:
/// - CallKit: records every report and action outcome, and answers
///   `reportNewIncomingCall` as iOS does (`.shown` for a new UUID,
///   `.alreadyReported` for one it still shows, or `refuseReports`).
/// - ringd: a small model of its call rules (`server`), answering each
///   request as ringd would, and telling the coordinator of changes other
///   devices make while logged in.
/// - Timers: due times on the test clock, fired by ``advance(by:)``.
final class CallKitHarness {
    static let uid = "bob"
    static let deviceId = "b-iphone"
    static let otherDevice = "b-ipad"

    let clock = TestClock()
    var coordinator: CallKitCoordinator
    var provider: [ProviderEvent] = []
    var sent: [ServerCommand] = []
    var app: [AppEvent] = []
    var connectRequests = 0
    var refuseReports = false
    /// When set, results wait in `heldResults` instead of arriving at once.
    var holdResults = false
    var heldResults: [ServerCommand] = []
    /// ringd's calls, by session id.
    var server: [String: Call] = [:]
    private(set) var showing: Set<CallUUID> = []
    private var timers: [CoordinatorTimer: Int64] = [:]
    private var loggedIn = false
    private var placed = 0

    init(answerTimeoutMs: Int64 = 15_000, endedCallsKept: Int = 64) {
        let clock = self.clock
        coordinator = CallKitCoordinator(
            configuration: .init(answerTimeoutMs: answerTimeoutMs, endedCallsKept: endedCallsKept),
            now: { clock.now })
    }

    // MARK: Inputs, as the adapter feeds them

    func push(_ call: Call) { perform(coordinator.receivedPush(Self.payload(of: call))) }
    func push(json: JSONValue) { perform(coordinator.receivedPush(json)) }
    func answer(_ sessionId: String) { perform(coordinator.answer(CallUUID(sessionId: sessionId))) }
    func endTapped(_ uuid: CallUUID) { perform(coordinator.end(uuid)) }
    func endTapped(_ sessionId: String) { endTapped(CallUUID(sessionId: sessionId)) }
    func mute(_ sessionId: String, _ muted: Bool) {
        perform(coordinator.setMuted(CallUUID(sessionId: sessionId), muted: muted))
    }
    func hold(_ sessionId: String) { perform(coordinator.setHeld(CallUUID(sessionId: sessionId), onHold: true)) }
    func start(_ uuid: CallUUID, to uid: String, type: CallType) {
        perform(coordinator.startCall(uuid, to: uid, type: type))
    }
    func providerReset() { perform(coordinator.providerReset()) }

    func login() {
        perform(coordinator.connectionChanged(.connecting))
        loggedIn = true
        perform(coordinator.connectionChanged(.loggedIn(uid: Self.uid, deviceId: Self.deviceId)))
    }

    /// The socket dropped; RingClient reconnects by itself.
    func connectionLost() {
        loggedIn = false
        perform(coordinator.connectionChanged(.connecting))
    }

    func advance(by ms: Int64) {
        clock.advance(by: ms)
        let due = timers.filter { $0.value <= clock.now }.sorted { $0.value < $1.value }
        for (timer, _) in due {
            timers[timer] = nil
            perform(coordinator.timerFired(timer))
        }
    }

    var scheduledTimers: Set<CoordinatorTimer> { Set(timers.keys) }

    // MARK: The server's side

    /// A call placed by alice to bob, ringing for 30 s from now.
    func ring(_ sessionId: String, type: CallType = .audio, callerName: String? = "Alice Liddell") -> Call {
        let call = Call(
            sessionId: sessionId, callType: type, status: .initiated, initiator: "alice", receiver: Self.uid,
            initiatorDevice: "a-laptop", initiatedAt: clock.now, timeoutMs: 30_000, initiatorName: callerName)
        server[sessionId] = call
        return call
    }

    /// A change made at ringd by someone else (another device, the caller,
    /// the ring timer): logged in, this device hears it as an event.
    func serverChanges(_ sessionId: String, _ change: (inout Call) -> Void) {
        guard var call = server[sessionId] else { return }
        change(&call)
        server[sessionId] = call
        if loggedIn { perform(coordinator.serverCall(call)) }
    }

    func answeredElsewhere(_ sessionId: String) {
        serverChanges(sessionId) {
            $0.status = .ongoing
            $0.acceptedBy = Self.otherDevice
        }
    }

    func callerCancels(_ sessionId: String) {
        serverChanges(sessionId) {
            $0.status = .cancelled
            $0.endReason = .cancelled
            $0.endedBy = "alice"
        }
    }

    func ringsOut(_ sessionId: String) {
        serverChanges(sessionId) {
            $0.status = .unanswered
            $0.endReason = .timeout
        }
    }

    func calleeAnswers(_ sessionId: String) {
        serverChanges(sessionId) {
            $0.status = .ongoing
            $0.acceptedBy = "a-phone"
        }
    }

    func calleeDeclines(_ sessionId: String) {
        serverChanges(sessionId) {
            $0.status = .rejected
            $0.endReason = .rejected
            $0.endedBy = "alice"
        }
    }

    /// The held requests take effect at the server, but their results are
    /// lost with the connection.
    func loseHeld() {
        let held = heldResults
        heldResults = []
        for command in held {
            _ = ServerModel.result(of: command, in: &server, deviceId: Self.deviceId, placed: &placed, clock: clock)
            perform(coordinator.commandFailed(command, code: "CLIENT_CONNECTION_LOST"))
        }
    }

    /// What a resume hands over: the call as it stands at the server.
    func resumed(_ sessionId: String) {
        guard let call = server[sessionId] else { return }
        perform(coordinator.serverCall(call))
    }

    /// Delivers held results in order; `code` fails them all instead.
    func releaseHeld(failing code: String? = nil) {
        let held = heldResults
        heldResults = []
        for command in held {
            if let code { perform(coordinator.commandFailed(command, code: code)) } else { answer(command) }
        }
    }

    // MARK: Performing actions

    func perform(_ actions: [CallKitAction]) {
        for action in actions {
            switch action {
            case .reportNewIncomingCall(let report):
                provider.append(.reported(report))
                let outcome: IncomingReportOutcome =
                    refuseReports ? .refused : showing.contains(report.uuid) ? .alreadyReported : .shown
                if outcome == .shown { showing.insert(report.uuid) }
                perform(coordinator.reportedIncomingCall(report.uuid, outcome: outcome))
            case .reportCallEnded(let uuid, let reason):
                provider.append(.ended(uuid, reason))
                showing.remove(uuid)
            case .reportOutgoingConnecting(let uuid): provider.append(.connecting(uuid))
            case .reportOutgoingConnected(let uuid): provider.append(.connected(uuid))
            case .fulfill(let providerAction):
                provider.append(.fulfilled(providerAction))
                if case .end(let uuid) = providerAction { showing.remove(uuid) }
            case .fail(let providerAction):
                provider.append(.failed(providerAction))
                // CallKit ends a call whose answer or start failed.
                switch providerAction {
                case .answer(let uuid), .start(let uuid): showing.remove(uuid)
                default: break
                }
            case .connect:
                connectRequests += 1
            case .send(let command):
                sent.append(command)
                if holdResults { heldResults.append(command) } else { answer(command) }
            case .scheduleTimer(let timer, let afterMs):
                timers[timer] = clock.now + afterMs
            case .cancelTimer(let timer):
                timers[timer] = nil
            case .presentCallScreen(let call):
                app.append(.presented(sessionId: call.sessionId, status: call.status))
            case .callEnded(let end):
                app.append(.ended(sessionId: end.sessionId, end.cause))
            case .setMuted(let sessionId, let muted):
                app.append(.muted(sessionId: sessionId, muted))
            }
        }
    }

    /// ringd's answer to a request from this device (docs/PROTOCOL.md, "Semantics").
    private func answer(_ command: ServerCommand) {
        let result = ServerModel.result(
            of: command, in: &server, deviceId: Self.deviceId, placed: &placed, clock: clock)
        switch result {
        case .success(let call): perform(coordinator.commandSucceeded(command, call: call))
        case .failure(let code): perform(coordinator.commandFailed(command, code: code))
        }
    }

    /// What CallKit is told of `call`'s ring.
    func report(_ call: Call) -> IncomingCallReport {
        IncomingCallReport(
            uuid: CallUUID(sessionId: call.sessionId), handle: call.initiator,
            displayName: call.initiatorName ?? call.initiator, hasVideo: call.callType == .video)
    }

    /// The APNs body ringd pushes for `call` (docs/PUSH.md).
    static func payload(of call: Call) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("aps", .object([])), ("sessionId", .string(call.sessionId)), ("callerUid", .string(call.initiator)),
            ("callType", .string(call.callType.rawValue)), ("initiatedAt", .integer(call.initiatedAt)),
            ("ringTimeout", .integer(Int64(call.timeout))),
        ]
        if let name = call.initiatorName { members.append(("callerName", .string(name))) }
        return .object(members)
    }
}
