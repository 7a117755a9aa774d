import SignalProtocol

extension SignalClient {
    /// Rings `receiverId` (`timeout`: how long, as `.seconds(1…300)` or a
    /// literal number of seconds, or `.milliseconds(50…300000)`; nil for
    /// the server's default; `metadata`: a JSON object of at most 4 KiB).
    /// Returns the call and how many callee devices the ring reached now (0:
    /// offline, rung until the timeout). A busy callee gives a call that is
    /// already `busy`; glare gives the other party's call, `ongoing`.
    ///
    /// Every initiate carries a `clientCallId` (`clientCallId`, or a new
    /// random one): when the connection is lost before the result came and
    /// the client reconnects (``ConnectOptions/reconnect``), it sends the
    /// same initiate again on the new connection, and the server answers
    /// with the call the first one placed, if it did, rather than a second
    /// call or `ERR_CALL_BUSY_SELF`. Pass your own id (1–64 of
    /// `A-Z a-z 0-9 . _ - @`) to repeat an initiate yourself, e.g. after a
    /// timeout or from a new client: within the call's ring timeout, or
    /// while it is live, the same id to the same user answers that call.
    public func initiateCall(
        to receiverId: String, type: CallType, timeout: RingTimeout? = nil,
        metadata: JSONValue? = nil, clientCallId: String? = nil
    ) async throws(ClientError) -> (call: Call, ringing: Int) {
        let data = try await performAcrossReconnects(
            .initiateCall(
                receiverId: receiverId, callType: type, timeout: timeout,
                metadata: metadata, clientCallId: clientCallId ?? ClientCallId.random()))
        guard case .initiated(let call, let ringing, _) = data else { throw Self.unexpected(data, "initiateCall") }
        return (call, ringing)
    }

    /// Accepts a ringing call (receiver devices only).
    public func acceptCall(_ sessionId: String) async throws(ClientError) -> Call {
        try await changeCall(.acceptCall(sessionId: sessionId))
    }

    /// Says this (receiver) device shows the ringing call: call it once the
    /// app handed the call to CallKit or rendered the ring, so the caller's
    /// devices can show "ringing". Saying it again changes nothing.
    public func ringing(_ sessionId: String) async throws(ClientError) -> Call {
        try await changeCall(.ringing(sessionId: sessionId))
    }

    /// Declines a ringing call with `rejected` or `busy`; from the caller,
    /// `cancelled` cancels it.
    public func rejectCall(
        _ sessionId: String, status: CallStatus = .rejected, reason: String? = nil
    ) async throws(ClientError) -> Call {
        try await changeCall(.rejectCall(sessionId: sessionId, status: status, reason: reason))
    }

    /// Cancels the user's own ringing call.
    public func cancelCall(_ sessionId: String) async throws(ClientError) -> Call {
        try await changeCall(.cancelCall(sessionId: sessionId))
    }

    /// Ends an ongoing call (either party).
    public func endCall(_ sessionId: String) async throws(ClientError) -> Call {
        try await changeCall(.endCall(sessionId: sessionId))
    }

    /// The user's live call (`initiated` or `ongoing`), or nil.
    public func getActiveCall() async throws(ClientError) -> Call? {
        let data = try await perform(.getActiveCall)
        guard case .activeCall(let call) = data else { throw Self.unexpected(data, "getActiveCall") }
        return call
    }

    /// A page of the user's call history, newest first; pass `next` as the
    /// filter's `cursor` for the following page (nil on the last one).
    public func getCallLogs(
        _ filter: CallLogFilter = CallLogFilter()
    ) async throws(ClientError) -> (logs: [CallLog], next: String?) {
        let data = try await perform(.getCallLogs(filter))
        guard case .callLogs(let page) = data else { throw Self.unexpected(data, "getCallLogs") }
        return (page.logs, page.next)
    }

    /// Relays `payload` (a JSON object of at most 16 KiB, e.g. an SDP offer
    /// or an ICE candidate) to the other party's device in the ongoing call
    /// `sessionId`; from this device only if it placed or accepted the call.
    /// Returns whether that device was connected to hear it (it arrives as
    /// ``ClientEvent/signal(_:)``).
    @discardableResult
    public func signal(_ sessionId: String, payload: JSONValue) async throws(ClientError) -> Bool {
        let data = try await perform(.signal(sessionId: sessionId, payload: payload))
        guard case .signalled(let delivered) = data else { throw Self.unexpected(data, "signal") }
        return delivered
    }

    /// Sets the user's do-not-disturb for every device of the user: `busy`
    /// answers new calls as busy, `silent` rings connected devices with
    /// `silent: true` and pushes nothing, `off` ends it. `until` (ms since
    /// the Unix epoch, in the future) ends it by itself.
    @discardableResult
    public func setDoNotDisturb(_ mode: DoNotDisturbMode, until: Int64? = nil) async throws(ClientError) -> DoNotDisturb
    {
        let data = try await perform(.setDoNotDisturb(DoNotDisturb(mode: mode, until: until)))
        guard case .doNotDisturb(let setting) = data else { throw Self.unexpected(data, "setDoNotDisturb") }
        return setting
    }

    /// The STUN and TURN servers for this user's peer connections, with TURN
    /// credentials minted now (valid until `expiresAt`).
    public func getIceServers() async throws(ClientError) -> IceServerList {
        let data = try await perform(.getIceServers)
        guard case .iceServers(let list) = data else { throw Self.unexpected(data, "getIceServers") }
        return list
    }

    /// A token that joins the media room of the ongoing call `sessionId`
    /// (a LiveKit room named by the session id; docs/MEDIA.md).
    public func getMediaToken(sessionId: String) async throws(ClientError) -> MediaToken {
        let data = try await perform(.getMediaToken(sessionId: sessionId))
        guard case .mediaToken(let token) = data else { throw Self.unexpected(data, "getMediaToken") }
        return token
    }

    /// Sets this device's push token, so that ringd pushes its calls to it
    /// while it is not connected (docs/PUSH.md). Returns the token as stored.
    public func registerPushToken(_ registration: PushRegistration) async throws(ClientError) -> RegisteredPushToken {
        let data = try await perform(.registerPushToken(registration))
        guard case .pushToken(let token) = data else { throw Self.unexpected(data, "registerPushToken") }
        return token
    }

    /// Removes this device's push token; whether it had one.
    public func unregisterPushToken() async throws(ClientError) -> Bool {
        let data = try await perform(.unregisterPushToken)
        guard case .pushTokenRemoved(let removed) = data else { throw Self.unexpected(data, "unregisterPushToken") }
        return removed
    }

    /// The ``CallNotification`` `call` means for this device, or nil when
    /// CometChat has no listener for it.
    public func notification(for call: Call) -> CallNotification? {
        CallNotification(call: call, uid: uid, deviceId: deviceId)
    }

    private func changeCall(_ request: ClientRequest) async throws(ClientError) -> Call {
        let data = try await perform(request)
        guard case .call(let call) = data else { throw Self.unexpected(data, request.type.rawValue) }
        return call
    }

    /// ``PendingRequests`` decodes each result for the request it answers,
    /// so another case is a bug of the client, not of the server.
    private static func unexpected(_ data: ResultData, _ request: String) -> ClientError {
        .protocolViolation("the \(request) result decoded as \(data)")
    }
}
