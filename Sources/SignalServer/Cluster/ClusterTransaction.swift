import SignalCore
import SignalProtocol

/// One input to the machine, run as one PostgreSQL transaction on the
/// node that received it (docs/CLUSTER.md, "How it works"), in two round
/// trips:
///
/// 1. read: one pipeline, `BEGIN` and a call of `ringd_transition`, which
///    locks the users the input touches and the other parties of their live
///    calls with transaction advisory locks in one global order, and returns
///    their live calls, their devices on every node, their grace periods and
///    the transition's change positions (``PostgresTransitionRead``);
/// 2. a new ``CallStateMachine``, seeded with that, decides as on one node:
///    the rules stay in one place, the machine, rather than in a copy in
///    PL/pgSQL that could drift from it;
/// 3. write: one pipeline of what it changed (calls, presence, timer rows,
///    webhook deliveries), a `NOTIFY` to each node with a device to tell,
///    and `COMMIT`.
///
/// A worker with the next transaction queued sends that one's step 1
/// after this one's `COMMIT`, in step 3's round trip (``ClusterLookahead``):
/// under load a transition costs about one round trip.
///
/// Every transition that can change what a user sees holds that user's
/// lock, so two nodes never decide about one user at once: busy, glare
/// and two devices accepting on two nodes are decided one after the other,
/// and each user's changes take positions in commit order.
struct ClusterTransaction {
    let description: TransitionInput
    let input: SignalingService.Input

    /// What a committed transaction leaves to do on this node.
    struct Outcome {
        /// The changes made, for the consumers (metrics).
        var changes: [CallChange] = []
        /// Calls that started ringing, to push from this node (docs/CLUSTER.md, "Push").
        var rings: [(call: Call, connected: [String])] = []
    }

    /// How often a transaction starts again because a live call named a
    /// user it had not locked (each time with more users), at most.
    static let lockRounds = 4

    /// Runs the transaction from `start` (``start(on:settings:now:node:leaseMillis:)``);
    /// throws what PostgreSQL or the store reported, after rolling back.
    /// `frame` encodes a result (counting failures).
    /// `received` holds the results of its read when they came with the
    /// previous transaction's commit (``ClusterLookahead``): the first round
    /// uses them rather than send the read again. `next`, the worker's
    /// next transaction, has its read sent after this one's `COMMIT`, in
    /// the same round trip.
    ///
    /// Locks are taken in one global order (``PostgresConnection/lockKey(_:)``):
    /// the users to lock are read first without locks, and when a live call
    /// read under the locks names another user, the transaction rolls back
    /// and starts again with that user too, rather than lock out of order
    /// and wait in a cycle.
    func run(
        _ start: Start, received: [PostgresRows]? = nil, on db: PostgresConnection, webhooks: ClusterWebhooks?,
        frame: (String?, Result<JSONValue, SignalError>) -> [UInt8], next: ClusterLookahead? = nil
    ) throws(StoreError) -> Outcome {
        var request = start.request
        var received = received
        do throws(StoreError) {
            for round in 0 ..< Self.lockRounds {
                let (reads, at) = round == 0 ? (start.reads, start.at) : readPipeline(request, node: start.node, on: db)
                let results: [PostgresRows]
                if let prefetched = received.take() {
                    results = prefetched
                } else {
                    var pipeline = PostgresPipeline()
                    // The round before found more users to lock: it ends first.
                    if db.isInTransaction { pipeline.append("ROLLBACK") }
                    let offset = pipeline.append(contentsOf: reads)
                    results = Array(
                        try reportingPostgresErrors { () throws(PostgresError) in try db.run(pipeline) }[offset...])
                }
                if let epoch = at.epoch { db.remember(epoch: results[epoch]) }
                let read = try PostgresTransitionRead(results[at.read])
                guard read.retry.isEmpty else {
                    request.users = read.retry
                    continue
                }
                // A timer another node fired first: nothing to commit.
                if let timer = at.timer, results[timer].affected == 0 {
                    try reportingPostgresErrors { () throws(PostgresError) in try db.execute("ROLLBACK") }
                    return Outcome()
                }
                let (writes, outcome) = try decide(
                    read, of: request, aliveHeld: at.alive.map { results[$0].count > 0 }, on: db,
                    settings: start.settings, now: start.now, node: start.node, webhooks: webhooks, frame: frame)
                guard !db.transactionFailed else {
                    throw StoreError(.database, "a statement of the transaction failed; it was rolled back")
                }
                try Self.commit(writes, on: db, next: next)
                return outcome
            }
        } catch {
            if db.isInTransaction { _ = try? db.execute("ROLLBACK") }
            throw error
        }
        if db.isInTransaction { _ = try? db.execute("ROLLBACK") }
        throw StoreError(
            .retry, "the users to lock kept growing (\(request.users.count) after \(Self.lockRounds) rounds)")
    }

    /// Runs `pipeline` in the transaction; a call whose session id is taken
    /// is the store's ``StoreErrorCode/callConflict``, as on one node.
    private static func run(_ pipeline: PostgresPipeline, on db: PostgresConnection) throws(StoreError) {
        do throws(PostgresError) {
            _ = try db.run(pipeline)
        } catch {
            throw storeError(error)
        }
    }

    /// Runs step 3's `writes`, which end with `COMMIT`, and after them the
    /// read of `next`, if any, in the same round trip. Only this
    /// transaction's failure is thrown: when `next`'s read fails (or the
    /// connection breaks) after the `COMMIT` was answered, this one
    /// committed, and `next` reads again by itself (after rolling back
    /// what its read began).
    private static func commit(
        _ writes: PostgresPipeline, on db: PostgresConnection, next: ClusterLookahead?
    ) throws(StoreError) {
        var pipeline = writes
        let ahead = next?.start(on: db)
        if let ahead { pipeline.append(contentsOf: ahead.reads) }
        let (completed, failure) = db.runUntilFailure(pipeline)
        if let failure, completed.count < writes.statements.count { throw storeError(failure) }
        if failure == nil, let ahead, let next {
            next.received(ahead, results: Array(completed[writes.statements.count...]))
        }
    }

    private static func storeError(_ error: PostgresError) -> StoreError {
        guard PostgresConnection.isCallConflict(error) else { return StoreError(error) }
        return StoreError(.callConflict, "a new call's session id is taken: \(error.message)")
    }

    /// Step 2 inside the transaction, the users' locks held: the pipeline
    /// of step 3, which ends with `COMMIT`, and what is left to do after it.
    /// `aliveHeld` tells whether this node's row is held alive, when it was read.
    private func decide(
        _ read: PostgresTransitionRead, of request: PostgresTransitionRead.Request, aliveHeld: Bool?,
        on db: PostgresConnection, settings: SignalingSettings,
        now: SignalingTime, node: Int64, webhooks: ClusterWebhooks?,
        frame: (String?, Result<JSONValue, SignalError>) -> [UInt8]
    ) throws(StoreError) -> (PostgresPipeline, Outcome) {
        var machine = CallStateMachine(settings: settings)
        let positions = PostgresConnection.positionsPerTransition
        machine.seed(
            calls: read.calls, devices: read.devices, graceGenerations: read.graces, users: read.users,
            after: read.seq - 1, reservedThrough: read.seq + positions - 1, epoch: try epoch(on: db), now: now,
            recentInitiates: request.initiator.map { [$0: read.recent] } ?? [:])
        let output = input(&machine, now)
        guard output.changes.count <= positions else {
            throw StoreError(
                .database,
                "a transition made \(output.changes.count) changes; a cluster transition makes at most \(positions)")
        }
        var writes = PostgresPipeline()
        for change in output.changes { writes.append(PostgresConnection.save(change)) }
        let plan = DeliveryPlan(output.actions)
        // The outbox: an event exists exactly when its change commits.
        webhooks?.record(output.changes, in: &writes)
        try reportingPostgresErrors { () throws(PostgresError) in
            try writePresence(
                before: read.devices, after: machine.devices, users: read.locked, node: node, aliveHeld: aliveHeld,
                on: db, into: &writes)
        }
        writeTimers(
            plan.timers, graces: read.graces, after: machine.graceGenerations, users: read.locked, now: now,
            into: &writes)
        var messages: [Int64: NodeMessage] = [:]
        for step in plan.steps { add(step, to: &messages, frame: frame) }
        // What a node answers from its store after the commit is read here,
        // in the transaction, and follows the steps as it does there: a
        // resume reads what this transition wrote, so the writes go first.
        for resume in plan.resumes {
            try Self.run(writes, on: db)
            writes = PostgresPipeline()
            let answer = try resumed(resume, on: db, now: now)
            messages[resume.address.node, default: NodeMessage()]
                .send(frame(resume.id, .success(answer)), to: [resume.address])
        }
        for lookup in plan.lookups {
            let error =
                switch Result(catching: { () throws(StoreError) in
                    try stored(lookup.sessionId, read: read, changes: output.changes, request: request, on: db)
                }) {
                case .success(let stored): SignalError.notLive(lookup.sessionId, stored: stored, askedBy: lookup.uid)
                case .failure(let failure): failure.signalError
                }
            messages[lookup.address.node, default: NodeMessage()]
                .send(frame(lookup.id, .failure(error)), to: [lookup.address])
        }
        for (target, message) in messages.sorted(by: { $0.key < $1.key }) where !message.isEmpty {
            writes.append(
                PostgresConnection.notify(ClusterChannel.node(target), node: target, body: message.body))
        }
        // To every node: the one that pushed the ring may be another.
        for call in plan.ringsStopped { writes.append(ClusterBroadcast.statement(ClusterBroadcast.pushStopped(call))) }
        writes.append("COMMIT")
        return (writes, Outcome(changes: output.changes, rings: plan.rings))
    }

    /// The call `sessionId` as the transaction leaves it: what it changed,
    /// else what the read returned for the input's session, else read now.
    private func stored(
        _ sessionId: String, read: PostgresTransitionRead, changes: [CallChange],
        request: PostgresTransitionRead.Request, on db: PostgresConnection
    ) throws(StoreError) -> Call? {
        if let changed = changes.last(where: { $0.after.sessionId == sessionId }) { return changed.after }
        guard sessionId == request.sessionId else { return try db.call(sessionId: sessionId) }
        return read.calls.first { $0.sessionId == sessionId } ?? read.stored
    }

    /// The store's epoch, for a connect (its auth result carries it, and a
    /// resume compares it); other inputs hand out no position to resume from.
    private func epoch(on db: PostgresConnection) throws(StoreError) -> String? {
        guard case .connect = description else { return nil }
        return try reportingPostgresErrors { () throws(PostgresError) in try db.storeEpoch() }
    }

    /// Presence rows as the machine left the devices. A device arriving
    /// here needs this node alive: a node another one declared dead (it
    /// stalled past its lease) must not take devices until it registered
    /// again. `aliveHeld` says whether the read held it, nil when it did
    /// not look (an input other than a connect adding a device: asked now).
    private func writePresence(
        before: [String: [String: DeviceAddress]], after: [String: [String: DeviceAddress]],
        users: Set<String>, node: Int64, aliveHeld: Bool?, on db: PostgresConnection,
        into writes: inout PostgresPipeline
    ) throws(PostgresError) {
        var aliveHeld = aliveHeld
        for uid in users.sorted() {
            let old = before[uid] ?? [:], new = after[uid] ?? [:]
            for (deviceId, address) in new.sorted(by: { $0.key < $1.key }) where old[deviceId] != address {
                if aliveHeld == nil { aliveHeld = try db.execute(PostgresConnection.holdAlive(node: node)).count > 0 }
                guard address.node == node, aliveHeld == true else {
                    throw PostgresError(sqlState: nil, message: "node \(address.node) is not registered as alive")
                }
                writes.append(PostgresConnection.setPresence(uid: uid, deviceId: deviceId, at: address))
            }
            for deviceId in old.keys.sorted() where new[deviceId] == nil {
                writes.append(PostgresConnection.removePresence(uid: uid, deviceId: deviceId))
            }
        }
    }

    /// Timer rows: what the machine scheduled or cancelled, and the grace
    /// periods it ended without a word (a device came back).
    private func writeTimers(
        _ timers: [TimerChange], graces: [String: UInt64], after: [String: UInt64],
        users: Set<String>, now: SignalingTime, into writes: inout PostgresPipeline
    ) {
        for uid in users.sorted() where graces[uid] != nil && after[uid] == nil {
            writes.append(PostgresConnection.deleteTimer(kind: "grace", subject: uid))
        }
        for timer in timers {
            switch timer {
            case .schedule(let timer, let at):
                // Due on the database's clock (PostgresConnection.setTimer), not this node's.
                writes.append(PostgresConnection.setTimer(timer, dueInMillis: at - now.monotonic))
            case .cancel(let timer):
                let row = PostgresConnection.row(of: timer)
                writes.append(PostgresConnection.deleteTimer(kind: row.kind, subject: row.subject))
            }
        }
    }

    /// Adds what `step` sends to the messages of the nodes it concerns.
    private func add(
        _ step: DeliveryPlan.Step, to messages: inout [Int64: NodeMessage],
        frame: (String?, Result<JSONValue, SignalError>) -> [UInt8]
    ) {
        switch step {
        case .reply(let address, let id, let reply):
            messages[address.node, default: NodeMessage()].send(frame(id, reply.map(\.json)), to: [address])
        case .send(let encoded, let recipients):
            for (node, addresses) in Dictionary(grouping: recipients, by: \.node) {
                messages[node, default: NodeMessage()].send(encoded, to: addresses)
            }
        case .close(let address, let code, let reason):
            messages[address.node, default: NodeMessage()].close(address, code: code, reason: reason)
        }
    }

    /// The `auth` result of a resume, read in the transaction. A read that
    /// fails makes it `resumed: false`, as on one node; the savepoint keeps
    /// the failure from aborting the transaction.
    private func resumed(
        _ resume: DeliveryPlan.Resume, on db: PostgresConnection, now: SignalingTime
    ) throws(StoreError) -> JSONValue {
        try reportingPostgresErrors { () throws(PostgresError) in try db.execute("SAVEPOINT resume") }
        let read = Result { () throws(StoreError) in
            try db.changedCalls(
                of: resume.authentication.uid, after: resume.afterSeq, limit: SignalingService.resumeCallLimit)
        }
        try reportingPostgresErrors { () throws(PostgresError) in
            try db.execute(db.transactionFailed ? "ROLLBACK TO SAVEPOINT resume" : "RELEASE SAVEPOINT resume")
        }
        return SignalingService.resumed(resume, read, now: now.wall)
    }
}

/// The `LISTEN` channels of a cluster.
enum ClusterChannel {
    /// What one node's devices are sent.
    static func node(_ node: Int64) -> String { "ringd_node_\(node)" }
    /// What every node hears: revocations, push tokens that changed, calls that stopped ringing.
    static let all = "ringd_all"
}
