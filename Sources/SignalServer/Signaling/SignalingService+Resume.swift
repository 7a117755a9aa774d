import SignalCore
import SignalProtocol

extension SignalingService {
    /// The most calls a resume answers with; a device that missed changes
    /// of more calls gets `resumed: false`.
    static let resumeCallLimit = 1000
    /// How far back a resume reaches: a device that missed a change older
    /// than this gets `resumed: false` (ms).
    static let resumeWindowMillis: Int64 = 24 * 60 * 60 * 1000

    /// Answers `auth` with `resume` once the store has read what the user's
    /// calls did after `seq`. Queued right after the connect (the caller
    /// holds the core's lock), so every change made later reaches the
    /// device as an event after this result. A store that cannot answer
    /// makes it `resumed: false`, not a failed `auth`.
    func replyResuming(
        _ address: DeviceAddress, id: String?, _ authentication: Authentication, after seq: Int64,
        wakeWriter: Bool
    ) {
        store.changedCalls(
            of: authentication.uid, after: seq, limit: Self.resumeCallLimit,
            wakeWriter: wakeWriter
        ) { [self] result in
            var answer = authentication
            answer.resume = Self.outcome(after: seq, result, handedOut: authentication.seq, now: clock.wall())
            let reply = ServerFrame.result(id: id, .success(ResultData.authenticated(answer).json))
            deliver([(address, .frame(reply.encoded))])
        }
    }

    /// `resumed: false` when the device asked after a position beyond the
    /// last one `handedOut` (another store's), missed more calls than
    /// ``resumeCallLimit``, or missed a change older than ``resumeWindowMillis``.
    static func outcome(
        after seq: Int64, _ read: Result<ChangedCalls, StoreError>, handedOut: Int64,
        now: Int64
    ) -> ResumeOutcome {
        guard case .success(let changed) = read, seq <= handedOut, !changed.exceeded else {
            return ResumeOutcome(resumed: false, calls: [])
        }
        if let oldest = changed.calls.first,
            (oldest.endedAt ?? oldest.acceptedAt ?? oldest.initiatedAt) < now - resumeWindowMillis
        {
            return ResumeOutcome(resumed: false, calls: [])
        }
        return ResumeOutcome(resumed: true, calls: changed.calls)
    }
}
