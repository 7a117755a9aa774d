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
    func replyResuming(_ resume: DeliveryPlan.Resume, from store: CallStore, wakeWriter: Bool) {
        store.changedCalls(
            of: resume.authentication.uid, after: resume.afterSeq, limit: Self.resumeCallLimit,
            wakeWriter: wakeWriter
        ) { [self] result in
            let answer = Self.resumed(resume, result, now: clock.wall())
            deliver([(resume.address, .frame(resultFrame(id: resume.id, .success(answer))))])
        }
    }

    /// The `auth` result of `resume`, given what the store read.
    static func resumed(
        _ resume: DeliveryPlan.Resume, _ read: Result<ChangedCalls, StoreError>, now: Int64
    ) -> JSONValue {
        var answer = resume.authentication
        answer.resume = outcome(after: resume.afterSeq, read, handedOut: answer.seq, now: now)
        return ResultData.authenticated(answer).json
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
