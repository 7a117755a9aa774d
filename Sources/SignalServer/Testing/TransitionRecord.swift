import SignalCore
import SignalProtocol

extension TransitionInput {
    /// The input as the test tap shows it.
    var json: JSONValue {
        switch self {
        case .request(let request, let id, let device):
            var members: [(key: String, value: JSONValue)] = [
                ("type", .string("request")),
                ("request", .string(request.type.rawValue)),
            ]
            members += Self.name(device) + [("requestId", .string(id))]
            if let sessionId = CallStateMachine.sessionId(of: request) {
                members.append(("sessionId", .string(sessionId)))
            }
            if case .initiateCall(let receiver, _, _, _, _) = request {
                members.append(("receiverId", .string(receiver)))
            }
            return .object(members)
        case .connect(let device, let requestId, let resumingAfter):
            return .object(
                [("type", .string("connect"))] + Self.name(device)
                    + [
                        ("requestId", requestId.map(JSONValue.string) ?? .null),
                        ("resumeAfterSeq", resumingAfter.map(JSONValue.integer) ?? .null),
                    ])
        case .disconnect(let device):
            return .object([("type", .string("disconnect"))] + Self.name(device))
        case .timer(let timer):
            return .object([("type", .string("timer"))] + TransitionRecord.describe(timer))
        case .unreachable(let sessionId):
            return .object([("type", .string("unreachable")), ("sessionId", .string(sessionId))])
        case .rebuild: return .object([("type", .string("rebuild"))])
        case .restart: return .object([("type", .string("restart"))])
        case .shutdown: return .object([("type", .string("shutdown"))])
        }
    }

    private static func name(_ device: Device) -> [(key: String, value: JSONValue)] {
        [("uid", .string(device.uid)), ("deviceId", .string(device.deviceId))]
    }
}

/// One transition of the state machine as the tap shows it: the input, the
/// calls before and after, and what the driver was told to do, with
/// devices named by uid and device id. Made under the service's lock while
/// the machine still knows who is at each address; published once the
/// store has committed (or failed to commit) the changes.
struct TransitionRecord: Sendable {
    /// The sessions the transition touched (for `GET /v1/test/transitions?sessionId=`).
    let sessionIds: [String]
    /// The users it touched (`?uid=`).
    let uids: [String]
    /// Everything but `seq` and `committed`, which publishing adds.
    let body: [(key: String, value: JSONValue)]

    init(input: TransitionInput, output: SignalingOutput, at wall: Int64, names: (DeviceAddress) -> (String, String)?) {
        func device(_ address: DeviceAddress) -> JSONValue {
            if let (uid, deviceId) = names(address) {
                return .object([("uid", .string(uid)), ("deviceId", .string(deviceId))])
            }
            return .object([
                ("loop", .integer(Int64(address.loop))), ("connection", .integer(Int64(address.connection))),
            ])
        }
        var sessionIds: [String] = output.changes.map(\.sessionId)
        var uids = output.changes.flatMap { [$0.after.initiator, $0.after.receiver] }
        if let uid = input.device?.uid { uids.append(uid) }
        switch input {
        case .request(let request, _, _): sessionIds += CallStateMachine.sessionId(of: request).map { [$0] } ?? []
        case .timer(.ring(let sessionId)), .unreachable(let sessionId): sessionIds.append(sessionId)
        case .timer(.grace(let uid, _)): uids.append(uid)
        default: break
        }
        for change in output.restartGrace {
            switch change {
            case .set(let uid, _), .clear(let uid): uids.append(uid)
            }
        }
        let changes: [JSONValue] = output.changes.map { change in
            .object([
                ("sessionId", .string(change.sessionId)),
                ("transition", change.transition.map { .string(Self.name(of: $0)) } ?? .string("create")),
                ("actor", Self.describe(change.actor)),
                ("before", change.before?.json ?? .null), ("after", change.after.json),
            ])
        }
        var actions: [JSONValue] = []
        for action in output.actions {
            if case .schedule(.grace(let uid, _), _) = action { uids.append(uid) }
            switch action {
            case .reply(let address, let id, let reply):
                actions.append(
                    .object(
                        [
                            ("type", .string("reply")), ("to", device(address)),
                            ("requestId", id.map(JSONValue.string) ?? .null),
                        ] + Self.describe(reply)))
            case .replyResuming(let address, let id, _, let afterSeq):
                actions.append(
                    .object([
                        ("type", .string("reply")), ("to", device(address)),
                        ("requestId", id.map(JSONValue.string) ?? .null), ("ok", .bool(true)),
                        ("resumingAfterSeq", .integer(afterSeq)),
                    ]))
            case .resolveSession(let address, let id, let sessionId, _):
                actions.append(
                    .object([
                        ("type", .string("reply")), ("to", device(address)),
                        ("requestId", .string(id)), ("ok", .bool(false)),
                        ("resolvedByStore", .string(sessionId)),
                    ]))
            case .event(let call, let recipients):
                sessionIds.append(call.sessionId)
                actions.append(
                    .object([
                        ("type", .string("event")), ("sessionId", .string(call.sessionId)),
                        ("status", .string(call.status.rawValue)), ("to", .array(recipients.map(device))),
                    ]))
            case .signal(let signal, let address):
                // The payload stays out: the tap shows who signalled whom, not the SDP.
                sessionIds.append(signal.sessionId)
                actions.append(
                    .object([
                        ("type", .string("signal")), ("sessionId", .string(signal.sessionId)),
                        ("to", device(address)),
                    ]))
            case .close(let address, let code, let reason):
                actions.append(
                    .object([
                        ("type", .string("close")), ("to", device(address)),
                        ("code", .integer(Int64(code.rawValue))), ("reason", .string(reason)),
                    ]))
            case .schedule(let timer, let at):
                actions.append(
                    .object([("type", .string("schedule"))] + Self.describe(timer) + [("dueAt", .integer(at))]))
            case .cancel(let timer):
                actions.append(.object([("type", .string("cancel"))] + Self.describe(timer)))
            case .push(let call, let connected):
                actions.append(
                    .object([
                        ("type", .string("push")), ("sessionId", .string(call.sessionId)),
                        ("connected", .array(connected.map(JSONValue.string))),
                    ]))
            case .pushStopped(let call):
                actions.append(.object([("type", .string("pushStopped")), ("sessionId", .string(call.sessionId))]))
            }
        }
        self.sessionIds = Array(Set(sessionIds)).sorted()
        self.uids = Array(Set(uids)).sorted()
        body = [
            ("at", .integer(wall)), ("input", input.json), ("changes", .array(changes)), ("actions", .array(actions)),
        ]
    }

    /// The record as published: its position on the tap and whether the store committed it.
    func json(seq: Int64, committed: Bool) -> JSONValue {
        .object([("seq", .integer(seq)), ("committed", .bool(committed))] + body)
    }

    static func describe(_ timer: SignalingTimer) -> [(key: String, value: JSONValue)] {
        switch timer {
        case .ring(let sessionId): [("timer", .string("ring")), ("sessionId", .string(sessionId))]
        case .grace(let uid, let generation):
            [
                ("timer", .string("grace")), ("uid", .string(uid)),
                ("generation", .integer(Int64(generation))),
            ]
        }
    }

    private static func describe(_ reply: SignalingReply) -> [(key: String, value: JSONValue)] {
        switch reply {
        case .success(let data): [("ok", .bool(true)), ("data", data.json)]
        case .failure(let error):
            [
                ("ok", .bool(false)),
                (
                    "error",
                    .object([
                        ("code", .string(error.code.rawValue)),
                        ("message", .string(error.message)),
                    ])
                ),
            ]
        }
    }

    private static func describe(_ actor: CallActor) -> JSONValue {
        switch actor {
        case .device(let uid, let deviceId): .object([("uid", .string(uid)), ("deviceId", .string(deviceId))])
        case .server: .string("server")
        }
    }

    static func name(of transition: CallTransition) -> String {
        switch transition {
        case .accept: "accept"
        case .ringing: "ringing"
        case .reject(let busy, _): busy ? "busy" : "reject"
        case .cancel: "cancel"
        case .hangUp: "hangUp"
        case .timeOut: "timeOut"
        case .loseConnection: "loseConnection"
        case .unreachable: "unreachable"
        case .shutDown: "shutDown"
        case .restart: "restart"
        }
    }
}
