import SignalProtocol

extension SignalClient {
    /// Rings `receiverId` (`timeout`: ring seconds, 1–300; `metadata`: a JSON
    /// object of at most 4 KiB). Returns the call and how many callee devices
    /// the ring reached now (0: offline, rung until the timeout). A busy callee
    /// gives a call that is already `busy`; glare gives the other party's call, `ongoing`.
    public func initiateCall(to receiverId: String, type: CallType, timeout: Int? = nil,
                             metadata: JSONValue? = nil) async throws(ClientError) -> (call: Call, ringing: Int) {
        let parameters = RequestFrame.initiateCall(receiverId: receiverId, type: type, timeout: timeout, metadata: metadata)
        return try ResultDecoding.initiated(try await perform("initiateCall", parameters))
    }

    /// Accepts a ringing call (receiver devices only).
    public func acceptCall(_ sessionId: String) async throws(ClientError) -> Call {
        try ResultDecoding.call(try await perform("acceptCall", [("sessionId", .string(sessionId))]))
    }

    /// Declines a ringing call with `rejected` or `busy`; from the caller,
    /// `cancelled` cancels it.
    public func rejectCall(_ sessionId: String, status: CallStatus = .rejected) async throws(ClientError) -> Call {
        let parameters: [(key: String, value: JSONValue)] = [("sessionId", .string(sessionId)),
                                                            ("status", .string(status.rawValue))]
        return try ResultDecoding.call(try await perform("rejectCall", parameters))
    }

    /// Cancels the user's own ringing call.
    public func cancelCall(_ sessionId: String) async throws(ClientError) -> Call {
        try ResultDecoding.call(try await perform("cancelCall", [("sessionId", .string(sessionId))]))
    }

    /// Ends an ongoing call (either party).
    public func endCall(_ sessionId: String) async throws(ClientError) -> Call {
        try ResultDecoding.call(try await perform("endCall", [("sessionId", .string(sessionId))]))
    }

    /// The user's live call (`initiated` or `ongoing`), or nil.
    public func getActiveCall() async throws(ClientError) -> Call? {
        try ResultDecoding.activeCall(try await perform("getActiveCall"))
    }

    /// A page of the user's call history, newest first; pass `next` as the
    /// filter's `cursor` for the following page (nil on the last one).
    public func getCallLogs(_ filter: CallLogFilter = CallLogFilter()) async throws(ClientError) -> (logs: [CallLog], next: String?) {
        try ResultDecoding.callLogs(try await perform("getCallLogs", RequestFrame.callLogs(filter)))
    }

    /// The ``CallNotification`` `call` means for this device, or nil when
    /// CometChat has no listener for it.
    public func notification(for call: Call) -> CallNotification? {
        CallNotification(call: call, uid: uid, deviceId: deviceId)
    }
}
