import SignalProtocol

/// What a start did with the calls the store held as live.
public struct StartReport: Sendable, Equatable {
    /// Calls that go on (`calls.onRestart: resume`).
    public var restored: Int
    /// Calls it ended: with `server_restart`, or `unanswered` when their
    /// ring deadline passed while the server was away.
    public var ended: Int
}

extension SignalingService {
    /// Continues from what the store holds, read at start before anyone
    /// connects: the change sequence goes on after the store's last
    /// position, and the live calls are restored or ended with
    /// `server_restart` as `calls.onRestart` says. Blocks until that is
    /// committed; the timers of restored calls start once loop 0 serves.
    public func start(from continuity: StoreContinuity) throws(StoreError) -> StartReport {
        // A cluster node has no start of its own: its calls stay in the
        // database, and its machines are seeded there (``CallBackend``).
        guard let store = backend.embeddedStore else { return StartReport(restored: 0, ended: 0) }
        let (output, live) = core.withLock { core in
            core.machine.continueSequence(after: continuity.lastSeq, epoch: continuity.epoch)
            for record in continuity.users { core.machine.remember(record) }
            let output =
                switch config.onRestart {
                case .resume:
                    core.machine.restore(
                        continuity.liveCalls, graceDeadlines: continuity.restartGraceDeadlines,
                        now: clock.now())
                case .end:
                    core.machine.restart(
                        with: continuity.liveCalls, graceDeadlines: continuity.restartGraceDeadlines,
                        now: clock.now())
                }
            return (output, core.machine.liveCalls.count)
        }
        if !output.changes.isEmpty || !output.restartGrace.isEmpty {
            try store.commitAndWait(
                output.changes, reservingSeq: output.seqReservation, restartGrace: output.restartGrace,
                recording: recording(for: output.changes))
            if !output.changes.isEmpty { for consumer in consumers { consumer.committed(output.changes) } }
        }
        startActions.withLock { $0 = output.actions }
        return StartReport(restored: live, ended: output.changes.count)
    }

    /// Stops taking requests, in one critical section so that no request
    /// slips in after, and waits until what was queued is committed. With
    /// `calls.onRestart: end` every live call ends with `server_shutdown` in
    /// that section and the devices are told (deliveries are queued on the
    /// loops ahead of anything asked of them afterwards); with `resume` the
    /// calls stay live for the next start. A recovery under way is given a
    /// moment to finish first.
    public func shutdown() {
        for _ in 0 ..< 3 where core.withLock({ $0.recovering }) { backend.flush() }
        core.withLock { core in
            core.stopping = true
            if config.onRestart == .end {
                run({ machine, now in machine.shutdown(now: now) }, .shutdown, on: &core.machine, wakeWriter: true)
            }
        }
        backend.flush()
    }
}
