import SignalProtocol

extension RingClient {
    /// Rings `uid` (`metadata`: a JSON object of at most 4 KiB). Every
    /// initiate carries a `clientCallId` (`clientCallId`, or a new random
    /// one); when the connection is lost before the result, the client
    /// sends the same initiate again once it has reconnected, and the server
    /// answers with the call the first one placed rather than a second call.
    /// Pass your own id to repeat an initiate yourself (e.g. from a new client).
    public func initiateCall(
        to uid: String, type: CallType, metadata: JSONValue? = nil, clientCallId: String? = nil
    ) async throws(RingError) -> Call {
        let data = try await perform(
            .initiateCall(
                receiverId: uid, callType: type, timeout: nil, metadata: metadata,
                clientCallId: clientCallId ?? ClientCallId.random()))
        guard case .initiated(let call, _, _) = data else { throw Self.unexpected(data, "initiateCall") }
        return call
    }

    /// Accepts a ringing call (receiver devices only).
    public func acceptCall(_ sessionId: String) async throws(RingError) -> Call {
        try await changeCall(.acceptCall(sessionId: sessionId))
    }

    /// Declines a ringing call, saying `reason` (1–140 characters) if given.
    public func rejectCall(_ sessionId: String, reason: String? = nil) async throws(RingError) -> Call {
        try await changeCall(.rejectCall(sessionId: sessionId, status: .rejected, reason: reason))
    }

    /// Cancels the user's own ringing call.
    public func cancelCall(_ sessionId: String) async throws(RingError) -> Call {
        try await changeCall(.cancelCall(sessionId: sessionId))
    }

    /// Ends an ongoing call (either party).
    public func endCall(_ sessionId: String) async throws(RingError) -> Call {
        try await changeCall(.endCall(sessionId: sessionId))
    }

    /// Says this (receiver) device shows the ringing call: call it once the
    /// call reached CallKit or the ring is on screen, so the caller can show "ringing".
    public func ringing(_ sessionId: String) async throws(RingError) -> Call {
        try await changeCall(.ringing(sessionId: sessionId))
    }

    /// The user's live call (`initiated` or `ongoing`), or nil.
    public func activeCall() async throws(RingError) -> Call? {
        let data = try await perform(.getActiveCall)
        guard case .activeCall(let call) = data else { throw Self.unexpected(data, "getActiveCall") }
        return call
    }

    /// A page of the user's call history, newest first; pass `next` as the
    /// filter's `cursor` for the following page (nil on the last one).
    public func callLogs(
        _ filter: CallLogFilter = CallLogFilter()
    ) async throws(RingError) -> (logs: [CallLog], next: String?) {
        let data = try await perform(.getCallLogs(filter))
        guard case .callLogs(let page) = data else { throw Self.unexpected(data, "getCallLogs") }
        return (page.logs, page.next)
    }

    /// Sets this device's push token (APNs VoIP or FCM; docs/PUSH.md).
    public func registerPushToken(_ registration: PushRegistration) async throws(RingError) {
        let data = try await perform(.registerPushToken(registration))
        guard case .pushToken = data else { throw Self.unexpected(data, "registerPushToken") }
    }

    /// Sets the user's do-not-disturb on every device: `busy` answers new
    /// calls as busy, `silent` rings without pushes, `off` ends it; `until`
    /// (ms since the Unix epoch) ends it by itself.
    public func setDoNotDisturb(_ mode: DoNotDisturbMode, until: Int64? = nil) async throws(RingError) {
        let data = try await perform(.setDoNotDisturb(DoNotDisturb(mode: mode, until: until)))
        guard case .doNotDisturb = data else { throw Self.unexpected(data, "setDoNotDisturb") }
    }

    /// A token that joins the media room of the ongoing call `sessionId` (docs/MEDIA.md).
    public func mediaToken(for sessionId: String) async throws(RingError) -> MediaToken {
        let data = try await perform(.getMediaToken(sessionId: sessionId))
        guard case .mediaToken(let token) = data else { throw Self.unexpected(data, "getMediaToken") }
        return token
    }

    /// Relays `payload` (a JSON object of at most 16 KiB: an SDP offer, an
    /// ICE candidate) to the other party's device in the ongoing call;
    /// returns whether that device was connected to hear it.
    @discardableResult
    public func signal(_ sessionId: String, payload: JSONValue) async throws(RingError) -> Bool {
        let data = try await perform(.signal(sessionId: sessionId, payload: payload))
        guard case .signalled(let delivered) = data else { throw Self.unexpected(data, "signal") }
        return delivered
    }

    private func changeCall(_ request: ClientRequest) async throws(RingError) -> Call {
        let data = try await perform(request)
        guard case .call(let call) = data else { throw Self.unexpected(data, request.type.rawValue) }
        return call
    }

    /// Results are decoded for the request they answer, so another case is
    /// a bug of the client, not of the server.
    private static func unexpected(_ data: ResultData, _ request: String) -> RingError {
        .protocolViolation("the \(request) result decoded as \(data)")
    }
}
