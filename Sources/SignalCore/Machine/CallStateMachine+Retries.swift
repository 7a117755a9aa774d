import SignalProtocol

/// Replays of a retried `initiateCall` and the per-user limit on placing
/// calls, both from ``RecentInitiates``.
extension CallStateMachine {
    /// The answer to an `initiateCall` from `uid` that repeats
    /// `clientCallId`: the call it placed, as it stands now, marked
    /// replayed; a validation error when that call went to someone else or
    /// was of another type; nil when no call of `uid` is remembered by that
    /// id (none was placed, or it ended and its ring deadline passed).
    func replay(
        _ clientCallId: String, from uid: String, to receiver: String, callType: CallType, now: SignalingTime
    ) -> SignalingReply? {
        guard let call = rememberedCall(clientCallId, of: uid, now: now) else { return nil }
        guard call.receiver == receiver, call.callType == callType else {
            return .failure(
                SignalError(
                    .validation,
                    "clientCallId \(clientCallId) already placed call \(call.sessionId) "
                        + "(\(call.callType.rawValue) to \(call.receiver)); a new call needs a new clientCallId"))
        }
        let ringing = call.status == .initiated ? devices[receiver]?.count ?? 0 : 0
        return .success(.initiated(call, ringing: ringing, replayed: true))
    }

    /// The call `uid` placed with `clientCallId`: while it is live (also
    /// when the machine adopted it at a restart) and, once over, until its
    /// ring deadline.
    private func rememberedCall(_ clientCallId: String, of uid: String, now: SignalingTime) -> Call? {
        if let live = liveCall(of: uid), live.initiator == uid, live.clientCallId == clientCallId { return live }
        guard let call = recentInitiates[uid]?.calls[clientCallId] else { return nil }
        if let live = liveCalls[call.sessionId] { return live }
        return now.wall < call.ringDeadline ? call : nil
    }

    /// `ERR_RATE_LIMITED` when `uid` placed `initiatesPerMinute` calls
    /// within the last 60 seconds; `retryAfterMs` is when enough of them
    /// have left the window for one more.
    func initiateLimitRefusal(of uid: String, now: SignalingTime) -> SignalError? {
        let limit = settings.initiatesPerMinute
        guard limit > 0 else { return nil }
        let window = RecentInitiates.windowMillis
        let placed = (recentInitiates[uid]?.placedAt ?? []).filter { $0 > now.wall - window }
        guard placed.count >= limit else { return nil }
        let retryAfter = max(1, placed[placed.count - limit] + window - now.wall)
        return SignalError(
            .rateLimited,
            "\(uid) placed \(placed.count) calls in the last minute, the most limits.initiatesPerMinute allows; "
                + "retry in \(retryAfter) ms",
            retryAfterMs: retryAfter)
    }

    /// Notes that its initiator placed `call` just now: it counts for the
    /// limit, and a retry with its `clientCallId` finds it.
    mutating func remember(placed call: Call, now: SignalingTime) {
        sweepRecentInitiates(now: now)
        let limit = settings.initiatesPerMinute
        guard limit > 0 || call.clientCallId != nil else { return }
        var recent = recentInitiates[call.initiator] ?? RecentInitiates()
        let live = liveCalls
        recent.prune(now: now.wall) { live[$0] != nil }
        if limit > 0 {
            recent.placedAt.append(call.initiatedAt)
            if recent.placedAt.count > limit { recent.placedAt.removeFirst(recent.placedAt.count - limit) }
        }
        if let clientCallId = call.clientCallId { recent.calls[clientCallId] = call }
        recentInitiates[call.initiator] = recent
    }

    /// Keeps the remembered copy of `call`, which just ended, as it ended.
    mutating func rememberEnd(of call: Call) {
        guard let clientCallId = call.clientCallId,
            recentInitiates[call.initiator]?.calls[clientCallId]?.sessionId == call.sessionId
        else { return }
        recentInitiates[call.initiator]?.calls[clientCallId] = call
    }

    /// At most once a window (wall clock, at a placed call), forgets what
    /// no user's retry or limit needs any more, so that users who stopped
    /// calling hold no memory.
    private mutating func sweepRecentInitiates(now: SignalingTime) {
        guard now.wall >= nextInitiateSweep else { return }
        nextInitiateSweep = now.wall + RecentInitiates.windowMillis
        let live = liveCalls
        var kept: [String: RecentInitiates] = [:]
        for (uid, var recent) in recentInitiates {
            recent.prune(now: now.wall) { live[$0] != nil }
            if !recent.isEmpty { kept[uid] = recent }
        }
        recentInitiates = kept
    }
}
