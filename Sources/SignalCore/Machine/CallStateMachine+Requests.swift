import SignalProtocol

extension CallStateMachine {
    /// A call request from an authenticated device (`auth` and `getCallLogs`
    /// are the driver's). The result goes to the device; the change, if any,
    /// to every other device of both parties.
    public mutating func handle(
        _ request: ClientRequest, id: String, from device: Device,
        now: SignalingTime
    ) -> SignalingOutput {
        var output = SignalingOutput()
        guard isRegistered(device) else {
            output.actions.append(
                .reply(device.address, id: id, .failure(SignalError(.authRequired, "authenticate first"))))
            return output
        }
        let result: SignalingReply
        switch request {
        case .initiateCall(let receiver, let callType, let timeout, let metadata):
            result = initiate(
                from: device, to: receiver, callType: callType, timeout: timeout,
                metadata: metadata, now: now, into: &output)
        case .acceptCall(let sessionId):
            result = change(sessionId, by: device, now: now, into: &output) { call throws(SignalError) in
                guard call.receiver == device.uid else {
                    throw SignalError(.notReceiver, "only \(call.receiver) can accept this call")
                }
                return .accept(deviceId: device.deviceId)
            }
        case .rejectCall(let sessionId, let status, let reason):
            result = change(sessionId, by: device, now: now, into: &output) { call throws(SignalError) in
                if call.initiator == device.uid {
                    guard status == .cancelled else {
                        throw SignalError(.notReceiver, "only \(call.receiver) can reject this call; cancel it instead")
                    }
                    return .cancel
                }
                guard status == .rejected || status == .busy else {
                    throw SignalError(.validation, "status must be rejected or busy (cancelled is for the caller)")
                }
                return .reject(busy: status == .busy, reason: reason)
            }
        case .cancelCall(let sessionId):
            result = change(sessionId, by: device, now: now, into: &output) { call throws(SignalError) in
                guard call.initiator == device.uid else {
                    throw SignalError(.notInitiator, "only \(call.initiator) can cancel this call")
                }
                return .cancel
            }
        case .endCall(let sessionId):
            result = change(sessionId, by: device, now: now, into: &output) { _ in .hangUp }
        case .getActiveCall:
            result = .success(.activeCall(liveCall(of: device.uid)))
        case .signal(let sessionId, let payload):
            result = relay(payload, in: sessionId, from: device, into: &output)
        case .auth, .getCallLogs, .registerPushToken, .unregisterPushToken, .getIceServers, .getMediaToken,
            .setDoNotDisturb:
            result = .failure(SignalError(.badRequest, "\(request.type.rawValue) is not a call request"))
        }
        if case .failure(let error) = result, error.code == .sessionNotFound,
            case let sessionId? = Self.sessionId(of: request)
        {
            output.actions.append(.resolveSession(device.address, id: id, sessionId: sessionId, uid: device.uid))
        } else {
            output.actions.insert(.reply(device.address, id: id, result), at: 0)
        }
        return output
    }

    package static func sessionId(of request: ClientRequest) -> String? {
        switch request {
        case .acceptCall(let id), .rejectCall(let id, _, _), .cancelCall(let id), .endCall(let id), .signal(let id, _):
            return id
        default: return nil
        }
    }

    /// Applies the transition `decide` picks (after checking the device's
    /// user may ask for it) to a live call the user is party of.
    private mutating func change(
        _ sessionId: String, by device: Device, now: SignalingTime,
        into output: inout SignalingOutput,
        _ decide: (Call) throws(SignalError) -> CallTransition
    ) -> SignalingReply {
        guard let call = liveCalls[sessionId] else {
            return .failure(SignalError(.sessionNotFound, "no live call \(sessionId)"))
        }
        guard call.isParty(device.uid) else {
            return .failure(SignalError(.notAParty, "\(device.uid) is not a party of call \(sessionId)"))
        }
        do throws(SignalError) {
            let transition = try decide(call)
            return .success(
                .call(
                    try commit(
                        transition, to: call, by: .device(uid: device.uid, deviceId: device.deviceId),
                        except: device.address, now: now, into: &output)))
        } catch {
            return .failure(error)
        }
    }

    /// Passes `payload` from the device of one party in an ongoing call to
    /// the other party's device in it, if that one is connected. Changes
    /// nothing, but goes through the store's queue like every output, so
    /// that it reaches the peer after every event queued before it.
    private func relay(
        _ payload: JSONValue, in sessionId: String, from device: Device,
        into output: inout SignalingOutput
    ) -> SignalingReply {
        guard let call = liveCalls[sessionId] else {
            return .failure(SignalError(.sessionNotFound, "no live call \(sessionId)"))
        }
        guard call.isParty(device.uid) else {
            return .failure(SignalError(.notAParty, "\(device.uid) is not a party of call \(sessionId)"))
        }
        guard call.status == .ongoing else {
            return .failure(SignalError(.notStarted, "call \(sessionId) still rings; signal once it is accepted"))
        }
        let peer = call.otherParty(of: device.uid)
        guard let own = call.device(of: device.uid), let peerDevice = call.device(of: peer) else {
            // Placed before the store recorded the caller's device: the same refusal for both sides.
            return .failure(
                SignalError(
                    .otherDevice,
                    "call \(sessionId) was placed before ringd recorded the caller's "
                        + "device; it cannot carry signals"))
        }
        guard own == device.deviceId else {
            return .failure(SignalError(.otherDevice, "call \(sessionId) is on device \(own) of \(device.uid)"))
        }
        guard let address = devices[peer]?[peerDevice] else { return .success(.signalled(delivered: false)) }
        output.actions.append(
            .signal(
                PeerSignal(
                    sessionId: sessionId, uid: device.uid, deviceId: device.deviceId,
                    payload: payload), to: address))
        return .success(.signalled(delivered: true))
    }

    private mutating func initiate(
        from device: Device, to receiver: String, callType: CallType, timeout: RingTimeout?,
        metadata: JSONValue?, now: SignalingTime,
        into output: inout SignalingOutput
    ) -> SignalingReply {
        guard receiver != device.uid else {
            return .failure(SignalError(.callingSelf, "a user cannot call themselves"))
        }
        let actor = CallActor.device(uid: device.uid, deviceId: device.deviceId)
        if let own = liveCall(of: device.uid) {
            // Glare: the receiver is ringing us right now; answer that call instead of starting a second one.
            guard own.status == .initiated, own.initiator == receiver, own.receiver == device.uid else {
                return .failure(SignalError(.callBusySelf, "\(device.uid) is already in call \(own.sessionId)"))
            }
            return Result { () throws(SignalError) in
                .initiated(
                    try commit(
                        .accept(deviceId: device.deviceId), to: own, by: actor, except: device.address,
                        now: now, into: &output), ringing: 0)
            }
        }
        let doNotDisturb = users[receiver]?.doNotDisturb.mode(at: now.wall) ?? .off
        var call = Call.placed(
            sessionId: newSessionId(), from: device.uid, device: device.deviceId, to: receiver,
            callType: callType, timeoutMs: timeout?.inMilliseconds ?? Int64(settings.defaultRingTimeout) * 1000,
            metadata: metadata,
            receiverBusy: liveCall(of: receiver) != nil || doNotDisturb == .busy, at: now.wall)
        call.silent = call.status == .initiated && doNotDisturb == .silent
        call.initiatorName = users[device.uid]?.profile?.name
        call.initiatorAvatarUrl = users[device.uid]?.profile?.avatarUrl
        call.receiverName = users[receiver]?.profile?.name
        call.receiverAvatarUrl = users[receiver]?.profile?.avatarUrl
        let placed = commit(.created(call, by: actor), except: device.address, now: now, into: &output)
        return .success(.initiated(placed, ringing: placed.status == .initiated ? devices[receiver]?.count ?? 0 : 0))
    }
}
