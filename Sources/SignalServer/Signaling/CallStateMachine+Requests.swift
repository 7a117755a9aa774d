import SignalProtocol

extension CallStateMachine {
    /// A call request from an authenticated device (`auth` and `getCallLogs`
    /// are the driver's). The result goes to the device; the change, if any,
    /// to every other device of both parties.
    public mutating func handle(_ request: ClientRequest, id: String, from device: Device, now: Int64) -> SignalingOutput {
        var output = SignalingOutput()
        guard isRegistered(device) else {
            output.actions.append(.reply(device.address, id: id, .failure(SignalError(.authRequired, "authenticate first"))))
            return output
        }
        let result: Result<JSONValue, SignalError>
        switch request {
        case .initiateCall(let receiver, let callType, let timeout, let metadata):
            result = initiate(from: device, to: receiver, callType: callType, timeout: timeout,
                              metadata: metadata, now: now, into: &output)
        case .acceptCall(let sessionId):
            result = change(sessionId, by: device, id: id, into: &output) { call throws(SignalError) in
                guard call.receiver == device.uid else {
                    throw SignalError(.notReceiver, "only \(call.receiver) can accept this call")
                }
                guard call.status == .initiated else {
                    throw SignalError(.alreadyJoined, "the call was already accepted")
                }
                call.status = .ongoing
                call.acceptedAt = now
                call.acceptedBy = device.deviceId
            }
        case .rejectCall(let sessionId, let status):
            result = change(sessionId, by: device, id: id, into: &output) { call throws(SignalError) in
                if call.initiator == device.uid {
                    guard status == .cancelled else {
                        throw SignalError(.notReceiver, "only \(call.receiver) can reject this call; cancel it instead")
                    }
                    try Self.end(&call, as: .cancelled, reason: .cancelled, by: device.uid, now: now)
                } else {
                    guard status == .rejected || status == .busy else {
                        throw SignalError(.validation, "status must be rejected or busy (cancelled is for the caller)")
                    }
                    try Self.end(&call, as: status, reason: status == .busy ? .busy : .rejected, by: device.uid, now: now)
                }
            }
        case .cancelCall(let sessionId):
            result = change(sessionId, by: device, id: id, into: &output) { call throws(SignalError) in
                guard call.initiator == device.uid else {
                    throw SignalError(.notInitiator, "only \(call.initiator) can cancel this call")
                }
                try Self.end(&call, as: .cancelled, reason: .cancelled, by: device.uid, now: now)
            }
        case .endCall(let sessionId):
            result = change(sessionId, by: device, id: id, into: &output) { call throws(SignalError) in
                guard call.status == .ongoing else {
                    throw SignalError(.notStarted, "the call has not been accepted; cancel or reject it")
                }
                call.status = .ended
                call.endedAt = now
                call.endedBy = device.uid
                call.endReason = .hangup
            }
        case .getActiveCall:
            result = .success(.object([("call", liveCall(of: device.uid)?.json ?? .null)]))
        case .auth, .getCallLogs:
            result = .failure(SignalError(.badRequest, "\(request.type) is not a call request"))
        }
        if case .failure(let error) = result, error.code == .sessionNotFound, case let sessionId? = Self.sessionId(of: request) {
            output.actions.append(.resolveSession(device.address, id: id, sessionId: sessionId, uid: device.uid))
        } else {
            output.actions.insert(.reply(device.address, id: id, result), at: 0)
        }
        return output
    }

    /// Moves a ringing call to a terminal status; an ongoing one must be ended instead.
    private static func end(_ call: inout Call, as status: CallStatus, reason: EndReason, by uid: String?,
                            now: Int64) throws(SignalError) {
        guard call.status == .initiated else {
            throw SignalError(.callOngoing, "the call is ongoing; end it instead")
        }
        call.status = status
        call.endedAt = now
        call.endedBy = uid
        call.endReason = reason
    }

    private static func sessionId(of request: ClientRequest) -> String? {
        switch request {
        case .acceptCall(let id), .rejectCall(let id, _), .cancelCall(let id), .endCall(let id): return id
        default: return nil
        }
    }

    /// Applies `transition` to a live call the device's user is party of.
    private mutating func change(_ sessionId: String, by device: Device, id: String, into output: inout SignalingOutput,
                                 _ transition: (inout Call) throws(SignalError) -> Void) -> Result<JSONValue, SignalError> {
        guard var call = liveCalls[sessionId] else {
            return .failure(SignalError(.sessionNotFound, "no live call \(sessionId)"))
        }
        guard call.isParty(device.uid) else {
            return .failure(SignalError(.notAParty, "\(device.uid) is not a party of call \(sessionId)"))
        }
        do {
            try transition(&call)
        } catch {
            return .failure(error)
        }
        commit(call, except: device.address, into: &output)
        return .success(.object([("call", call.json)]))
    }

    private mutating func initiate(from device: Device, to receiver: String, callType: CallType, timeout: Int?,
                                   metadata: JSONValue?, now: Int64,
                                   into output: inout SignalingOutput) -> Result<JSONValue, SignalError> {
        guard receiver != device.uid else {
            return .failure(SignalError(.callingSelf, "a user cannot call themselves"))
        }
        if var own = liveCall(of: device.uid) {
            // Glare: the receiver is ringing us right now; join that call instead of starting a second one.
            guard own.status == .initiated, own.initiator == receiver, own.receiver == device.uid else {
                return .failure(SignalError(.callBusySelf, "\(device.uid) is already in call \(own.sessionId)"))
            }
            own.status = .ongoing
            own.acceptedAt = now
            own.acceptedBy = device.deviceId
            commit(own, except: device.address, into: &output)
            return .success(.object([("call", own.json), ("ringing", .integer(0))]))
        }
        var call = Call(sessionId: newSessionId(), callType: callType, status: .initiated, initiator: device.uid,
                        receiver: receiver, initiatedAt: now, timeout: timeout ?? settings.defaultRingTimeout,
                        metadata: metadata)
        if liveCall(of: receiver) != nil {
            call.status = .busy
            call.endedAt = now
            call.endReason = .busy
            commit(call, except: device.address, into: &output)
            return .success(.object([("call", call.json), ("ringing", .integer(0))]))
        }
        commit(call, except: device.address, into: &output)
        output.actions.append(.schedule(.ring(sessionId: call.sessionId), at: now + Int64(call.timeout) * 1000))
        let ringing = devices[receiver]?.count ?? 0
        return .success(.object([("call", call.json), ("ringing", .integer(Int64(ringing)))]))
    }
}
