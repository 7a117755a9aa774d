import SignalCore
import SignalProtocol

/// One input to the machine, run as one PostgreSQL transaction on the
/// node that received it (docs/CLUSTER.md, "How it works"):
///
/// 1. lock the users the input touches, and the other parties of their live
///    calls, with transaction advisory locks in one global order;
/// 2. read their live calls, their devices on every node and their grace
///    periods into a new ``CallStateMachine``, which decides as on one node;
/// 3. write what it changed: calls, presence, timer rows, webhook deliveries;
/// 4. `NOTIFY` each node with a device to tell, and commit.
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

    /// Runs the transaction; throws what PostgreSQL or the store reported,
    /// after rolling back. `frame` encodes a result (counting failures);
    /// devices of a node whose lease of `leaseMillis` lapsed are not
    /// connected for it (``PostgresConnection/presence(of:leaseMillis:keeping:)``).
    ///
    /// Locks are taken in one global order (``PostgresConnection/lockUsers(_:)``):
    /// the users to lock are read first without locks, and when a live call
    /// read under the locks names another user, the transaction rolls back
    /// and starts again with that user too, rather than lock out of order
    /// and wait in a cycle.
    func run(
        on db: PostgresConnection, settings: SignalingSettings, now: SignalingTime, node: Int64,
        leaseMillis: Int64, webhooks: ClusterWebhooks?,
        frame: (String?, Result<JSONValue, SignalError>) -> [UInt8]
    ) throws(StoreError) -> Outcome {
        let first = try reportingPostgresErrors { () throws(PostgresError) in try initialUsers(db) }
        var wanted = first.union(Self.parties(of: try db.liveCalls(ofAny: first.sorted())))
        for _ in 0 ..< Self.lockRounds {
            try reportingPostgresErrors { () throws(PostgresError) in try db.execute("BEGIN") }
            do throws(StoreError) {
                try reportingPostgresErrors { () throws(PostgresError) in try db.lockUsers(wanted) }
                let calls = try db.liveCalls(ofAny: wanted.sorted())
                let needed = wanted.union(Self.parties(of: calls))
                guard needed.isSubset(of: wanted) else {
                    try reportingPostgresErrors { () throws(PostgresError) in try db.execute("ROLLBACK") }
                    wanted = needed
                    continue
                }
                let outcome = try decide(
                    on: db, users: wanted, calls: calls, settings: settings, now: now, node: node,
                    leaseMillis: leaseMillis, webhooks: webhooks, frame: frame)
                guard !db.transactionFailed else {
                    throw StoreError(.database, "a statement of the transaction failed; it was rolled back")
                }
                try reportingPostgresErrors { () throws(PostgresError) in
                    try db.execute(outcome == nil ? "ROLLBACK" : "COMMIT")
                }
                return outcome ?? Outcome()
            } catch {
                _ = try? db.execute("ROLLBACK")
                throw error
            }
        }
        throw StoreError(.retry, "the users to lock kept growing (\(wanted.count) after \(Self.lockRounds) rounds)")
    }

    private static func parties(of calls: [Call]) -> Set<String> {
        Set(calls.flatMap { [$0.initiator, $0.receiver] })
    }

    /// Steps 2 to 4 inside the transaction, the users' locks held; nil when
    /// there is nothing to commit (a timer another node fired first).
    private func decide(
        on db: PostgresConnection, users locked: Set<String>, calls: [Call], settings: SignalingSettings,
        now: SignalingTime, node: Int64, leaseMillis: Int64, webhooks: ClusterWebhooks?,
        frame: (String?, Result<JSONValue, SignalError>) -> [UInt8]
    ) throws(StoreError) -> Outcome? {
        let (devices, graces, seq) = try reportingPostgresErrors { () throws(PostgresError) in
            (
                try db.presence(of: locked, leaseMillis: leaseMillis, keeping: disconnectedNode),
                try db.graceGenerations(of: locked), try db.nextSeq()
            )
        }
        if case .timer(let timer) = description {
            guard try reportingPostgresErrors({ () throws(PostgresError) in try db.takeTimer(timer) })
            else { return nil }
        }
        var machine = CallStateMachine(settings: settings)
        let positions = PostgresConnection.positionsPerTransition
        machine.seed(
            calls: calls, devices: devices, graceGenerations: graces,
            users: readsUsers ? try db.users(ofAny: locked.sorted()) : [], after: seq - 1,
            reservedThrough: seq + positions - 1, epoch: try epoch(on: db), now: now,
            recentInitiates: try recentInitiates(on: db, settings: settings, now: now))
        let output = input(&machine, now)
        guard output.changes.count <= positions else {
            throw StoreError(
                .database,
                "a transition made \(output.changes.count) changes; a cluster transition makes at most \(positions)")
        }
        for change in output.changes { try db.save(change.after) }
        let plan = DeliveryPlan(output.actions)
        try reportingPostgresErrors { () throws(PostgresError) in
            // The outbox: an event exists exactly when its change commits.
            try webhooks?.record(output.changes, on: db)
            try writePresence(before: devices, after: machine.devices, users: locked, node: node, on: db)
            try writeTimers(
                plan.timers, graces: graces, after: machine.graceGenerations, users: locked, now: now, on: db)
        }
        var messages: [Int64: NodeMessage] = [:]
        for step in plan.steps { add(step, to: &messages, frame: frame) }
        // What a node answers from its store after the commit is read here,
        // in the transaction, and follows the steps as it does there.
        for resume in plan.resumes {
            let answer = try resumed(resume, on: db, now: now)
            messages[resume.address.node, default: NodeMessage()]
                .send(frame(resume.id, .success(answer)), to: [resume.address])
        }
        for lookup in plan.lookups {
            let error =
                switch Result(catching: { () throws(StoreError) in try db.call(sessionId: lookup.sessionId) }) {
                case .success(let stored): SignalError.notLive(lookup.sessionId, stored: stored, askedBy: lookup.uid)
                case .failure(let failure): failure.signalError
                }
            messages[lookup.address.node, default: NodeMessage()]
                .send(frame(lookup.id, .failure(error)), to: [lookup.address])
        }
        try reportingPostgresErrors { () throws(PostgresError) in
            for (target, message) in messages.sorted(by: { $0.key < $1.key }) where !message.isEmpty {
                try db.notify(ClusterChannel.node(target), node: target, body: message.body)
            }
            // To every node: the one that pushed the ring may be another.
            for call in plan.ringsStopped {
                try ClusterBroadcast.send(ClusterBroadcast.pushStopped(call), on: db)
            }
        }
        return Outcome(changes: output.changes, rings: plan.rings)
    }

    /// The node of the device a disconnect takes away, whose presence the
    /// transaction reads even when its lease lapsed (a dead node's devices
    /// leave through disconnects).
    private var disconnectedNode: Int64? {
        if case .disconnect(let device) = description { device.address.node } else { nil }
    }

    /// The store's epoch, for a connect (its auth result carries it, and a
    /// resume compares it); other inputs hand out no position to resume from.
    private func epoch(on db: PostgresConnection) throws(StoreError) -> String? {
        guard case .connect = description else { return nil }
        return try reportingPostgresErrors { () throws(PostgresError) in try db.storeEpoch() }
    }

    /// Whether the machine reads users' records for the input: a call
    /// placed (profiles, do-not-disturb) and a device arriving (its user's
    /// do-not-disturb); other inputs skip the query.
    private var readsUsers: Bool {
        switch description {
        case .request(.initiateCall, _, _), .connect: true
        default: false
        }
    }

    /// For an `initiateCall`, what the caller's recent calls on every node
    /// say (a retry's call, the per-user limit), read under the caller's lock.
    private func recentInitiates(
        on db: PostgresConnection, settings: SignalingSettings, now: SignalingTime
    ) throws(StoreError) -> [String: RecentInitiates] {
        guard case .request(.initiateCall(_, _, _, _, let clientCallId), _, let device) = description,
            clientCallId != nil || settings.initiatesPerMinute > 0
        else { return [:] }
        return [
            device.uid: try db.recentInitiates(
                of: device.uid, clientCallId: clientCallId, limit: settings.initiatesPerMinute, now: now.wall)
        ]
    }

    /// The users the input names before anything is locked.
    private func initialUsers(_ db: PostgresConnection) throws(PostgresError) -> Set<String> {
        switch description {
        case .request(let request, _, let device):
            if case .initiateCall(let receiver, _, _, _, _) = request { return [device.uid, receiver] }
            guard let sessionId = CallStateMachine.sessionId(of: request) else { return [device.uid] }
            return try parties(of: sessionId, db).union([device.uid])
        case .connect(let device, _, _), .disconnect(let device):
            return [device.uid]
        case .timer(.ring(let sessionId)), .unreachable(let sessionId):
            return try parties(of: sessionId, db)
        case .timer(.grace(let uid, _)):
            return [uid]
        case .rebuild, .restart, .shutdown:
            return []
        }
    }

    /// A call's parties (which never change, so reading them unlocked is safe).
    private func parties(of sessionId: String, _ db: PostgresConnection) throws(PostgresError) -> Set<String> {
        let rows = try db.execute("SELECT initiator, receiver FROM calls WHERE session_id = $1", [sessionId])
        guard rows.count > 0, let initiator = rows.string(0, 0), let receiver = rows.string(0, 1) else { return [] }
        return [initiator, receiver]
    }

    /// Presence rows as the machine left the devices. A device arriving
    /// here needs this node alive: a node another one declared dead (it
    /// stalled past its lease) must not take devices until it registered again.
    private func writePresence(
        before: [String: [String: DeviceAddress]], after: [String: [String: DeviceAddress]],
        users: Set<String>, node: Int64, on db: PostgresConnection
    ) throws(PostgresError) {
        for uid in users.sorted() {
            let old = before[uid] ?? [:], new = after[uid] ?? [:]
            for (deviceId, address) in new.sorted(by: { $0.key < $1.key }) where old[deviceId] != address {
                guard address.node == node, try db.holdAlive(node: node) else {
                    throw PostgresError(sqlState: nil, message: "node \(address.node) is not registered as alive")
                }
                try db.setPresence(uid: uid, deviceId: deviceId, at: address)
            }
            for deviceId in old.keys.sorted() where new[deviceId] == nil {
                try db.removePresence(uid: uid, deviceId: deviceId)
            }
        }
    }

    /// Timer rows: what the machine scheduled or cancelled, and the grace
    /// periods it ended without a word (a device came back).
    private func writeTimers(
        _ timers: [TimerChange], graces: [String: UInt64], after: [String: UInt64],
        users: Set<String>, now: SignalingTime, on db: PostgresConnection
    ) throws(PostgresError) {
        for uid in users.sorted() where graces[uid] != nil && after[uid] == nil {
            try db.deleteTimer(kind: "grace", subject: uid)
        }
        for timer in timers {
            switch timer {
            case .schedule(let timer, let at):
                // Due on the database's clock (PostgresConnection.setTimer), not this node's.
                try db.setTimer(timer, dueInMillis: at - now.monotonic)
            case .cancel(let timer):
                let row = PostgresConnection.row(of: timer)
                try db.deleteTimer(kind: row.kind, subject: row.subject)
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
