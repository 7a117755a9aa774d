import SignalProtocol

extension SignalingService {
    /// Seconds between attempts to read the store back while it keeps failing.
    static let recoveryRetrySeconds = 1.0

    /// A commit failed (on the thread that ran the store's batch): its change and every
    /// change made after it are lost (the store's chain refuses them), so
    /// the machine must forget them too. Requests are refused from now on
    /// and the store is read back once everything queued before is done.
    func commitFailed(_ error: StoreError, store: CallStore) {
        let first = core.withLock { core -> Bool in
            defer { core.recovering = true }
            return !core.recovering
        }
        guard first else { return }
        Log.error("store commit failed, the change is not durable: \(error); rebuilding the calls from the store")
        recoverFromStore(store)
    }

    /// Reads the live calls back (after every change queued so far) and
    /// rebuilds the machine from them, then applies the inputs deferred
    /// meanwhile. While the store keeps failing, tries again every
    /// ``recoveryRetrySeconds``.
    private func recoverFromStore(_ store: CallStore) {
        store.recoverChain { [self] result in
            switch result {
            case .success(let calls):
                let count = core.withLock { core in
                    run(
                        { machine, now in machine.rebuild(from: calls, now: now) }, .rebuild, on: &core.machine,
                        wakeWriter: true)
                    core.recovering = false
                    if core.paused == nil { replayDeferred(&core) }
                    return calls.count
                }
                Log.info("rebuilt the calls from the store (\(count) live); taking requests again")
            case .failure(let error) where error.code == .closed:
                return
            case .failure(let error):
                Log.error("reading the calls back from the store failed: \(error); trying again")
                retryRecovery(store)
            }
        }
    }

    /// Applies the inputs that waited while the machine was recovering or
    /// paused, in order (with the core locked).
    func replayDeferred(_ core: inout Core) {
        let deferred = core.deferred
        core.deferred = []
        for (input, description) in deferred { run(input, description, on: &core.machine, wakeWriter: true) }
    }

    /// Schedules another ``recoverFromStore()`` on loop 0 (without loops
    /// there is no server to recover for).
    private func retryRecovery(_ store: CallStore) {
        guard let loop0 = mailboxes.withLock({ $0[0] }) else { return }
        loop0.submit { [self] loop in
            loop.schedule(after: Self.recoveryRetrySeconds) { [self] in recoverFromStore(store) }
        }
    }
}
