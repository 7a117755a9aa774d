import SignalCore
import SignalProtocol

/// The rows only a cluster has (docs/CLUSTER.md): node leases, presence,
/// due timers, the user locks of a transition, messages between nodes.
extension PostgresConnection {
    /// A connection for a cluster node's worker or listener: a transaction
    /// waits for another's locks at most `lockTimeoutSeconds`, and one left
    /// open by a node that froze is ended after `leaseSeconds` (with its
    /// locks), so a stalled node cannot hold others up for longer than it
    /// takes to declare it dead.
    static func clusterSession(url: String, leaseSeconds: Double) throws(PostgresError) -> PostgresConnection {
        let connection = try PostgresConnection(url: url)
        let idle = max(1000, Int(leaseSeconds * 1000))
        try connection.execute("SET lock_timeout = 5000")
        try connection.execute("SET statement_timeout = 10000")
        try connection.execute("SET idle_in_transaction_session_timeout = \(idle)")
        return connection
    }

    // MARK: Nodes

    /// The database's clock in ms: leases are written and compared on it,
    /// so nodes whose clocks disagree still agree on which lease lapsed.
    static let databaseNow = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

    /// A new node's number; its lease starts now.
    /// Called on the node's listening connection, which it names with a
    /// random token first (its `application_name`) and records by pid and
    /// token (see ``fence(_:)``, in PostgresFenceRows.swift).
    func registerNode(name: String) throws(PostgresError) -> Int64 {
        var random = SystemRandomNumberGenerator()
        let token = "ringd listener " + (0 ..< 2).map { _ in String(random.next() as UInt64, radix: 16) }.joined()
        try execute("SELECT set_config('application_name', $1, false)", [token])
        let rows = try execute(
            """
            INSERT INTO nodes (started_at, renewed_at, name, listener_pid, listener_token)
            VALUES (\(Self.databaseNow), \(Self.databaseNow), $1, pg_backend_pid(), $2)
            RETURNING node_id
            """, [name, token])
        guard let node = rows.int64(0, 0) else {
            throw PostgresError(sqlState: nil, message: "no node number returned")
        }
        return node
    }

    /// Renews `node`'s lease and answers the database's time it wrote
    /// (ms); nil when another node declared it dead (it stopped renewing
    /// for longer than the lease) or its row is gone.
    func renewLease(node: Int64) throws(PostgresError) -> Int64? {
        try execute(
            "UPDATE nodes SET renewed_at = \(Self.databaseNow) WHERE node_id = $1 AND NOT dead RETURNING renewed_at",
            [String(node)]
        ).int64(0, 0)
    }

    /// The database's clock now, in ms.
    func databaseTime() throws(PostgresError) -> Int64 {
        guard let now = try execute("SELECT \(Self.databaseNow)").int64(0, 0) else {
            throw PostgresError(sqlState: nil, message: "the database's time was not returned")
        }
        return now
    }

    /// Declares dead every node whose lease is older than `leaseMillis` and
    /// returns the dead nodes still holding devices or rows, with how long
    /// ago (ms, on the database's clock, so a node's own clock does not
    /// move it) their lease ran out. Once dead, a node stays dead: it can
    /// neither renew nor take devices again.
    func lapsedNodes(leaseMillis: Int64) throws(PostgresError) -> [(node: Int64, lapsedMillisAgo: Int64)] {
        let rows = try execute(
            """
            UPDATE nodes SET dead = true WHERE dead OR renewed_at < \(Self.databaseNow) - $1
            RETURNING node_id, greatest(0, \(Self.databaseNow) - (renewed_at + $1))
            """, [String(leaseMillis)])
        return (0 ..< rows.count).compactMap { row in
            guard let node = rows.int64(row, 0), let ago = rows.int64(row, 1) else { return nil }
            return (node, ago)
        }.sorted { $0.node < $1.node }
    }

    /// Declares `node` dead: it stops for good, and every node takes its
    /// devices away at its next lease round.
    func declareDead(_ node: Int64) throws(PostgresError) {
        try execute("UPDATE nodes SET dead = true WHERE node_id = $1", [String(node)])
    }

    /// Locks `node`'s row against being declared dead until the
    /// transaction ends; no row when it is dead or gone.
    static func holdAlive(node: Int64) -> PostgresPipeline.Statement {
        .init(sql: "SELECT 1 FROM nodes WHERE node_id = $1 AND NOT dead FOR SHARE", parameters: [String(node)])
    }

    /// Deletes, in one statement, the presence of the dead `node`'s devices
    /// whose users have no live call: their disconnect changes nothing else
    /// (no grace period starts, nobody is told), so it need not go through
    /// the machine one transaction at a time. A call placed meanwhile did
    /// not count them either (``PostgresTransitionRead/devices``).
    func removeIdlePresence(onNode node: Int64) throws(PostgresError) -> Int {
        try execute(
            """
            DELETE FROM presence p
            WHERE p.node_id IN (SELECT node_id FROM nodes WHERE node_id = $1 AND dead)
            AND NOT EXISTS (
                SELECT 1 FROM calls c WHERE (c.status = 'initiated' OR c.status = 'ongoing')
                AND (c.initiator = p.uid OR c.receiver = p.uid))
            """, [String(node)]
        ).affected
    }

    /// The devices presence puts on `node`.
    func devices(onNode node: Int64) throws(PostgresError) -> [Device] {
        let rows = try execute(
            "SELECT uid, device_id, loop, connection FROM presence WHERE node_id = $1", [String(node)])
        return (0 ..< rows.count).compactMap { row in
            guard let uid = rows.string(row, 0), let deviceId = rows.string(row, 1), let loop = rows.int64(row, 2),
                let connection = rows.int64(row, 3)
            else { return nil }
            return Device(
                uid: uid, deviceId: deviceId,
                address: DeviceAddress(node: node, loop: Int(loop), connection: UInt64(connection)))
        }
    }

    /// Deletes the dead `node` once no device is left on it, with the
    /// messages it did not take; false while devices remain.
    func removeNode(_ node: Int64) throws(PostgresError) -> Bool {
        try execute(
            """
            WITH gone AS (
                DELETE FROM nodes WHERE node_id = $1 AND dead AND NOT EXISTS (SELECT 1 FROM presence WHERE node_id = $1)
                RETURNING node_id)
            DELETE FROM node_messages WHERE node_id IN (SELECT node_id FROM gone) RETURNING id
            """, [String(node)])
        return try execute("SELECT 1 FROM nodes WHERE node_id = $1", [String(node)]).count == 0
    }

    // MARK: Locks

    /// Takes the transaction's lock on each user, in the order of the lock
    /// keys, so that two transitions locking overlapping users cannot wait
    /// for each other in a cycle. Released at COMMIT or ROLLBACK.
    func lockUsers(_ uids: some Sequence<String>) throws(PostgresError) {
        for key in Set(uids.map(Self.lockKey)).sorted() {
            try execute("SELECT pg_advisory_xact_lock($1)", [String(key)])
        }
    }

    /// The advisory lock key of a user: FNV-1a over the uid, the same on
    /// every node (PostgreSQL's own hash functions are not promised stable
    /// across versions). Two users sharing a key only wait for each other.
    static func lockKey(_ uid: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in uid.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    // MARK: Presence

    func setPresence(uid: String, deviceId: String, at address: DeviceAddress) throws(PostgresError) {
        try execute(Self.setPresence(uid: uid, deviceId: deviceId, at: address))
    }

    static func setPresence(uid: String, deviceId: String, at address: DeviceAddress) -> PostgresPipeline.Statement {
        .init(
            sql: """
                INSERT INTO presence (uid, device_id, node_id, loop, connection) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (uid, device_id) DO UPDATE SET node_id = $3, loop = $4, connection = $5
                """,
            parameters: [uid, deviceId, String(address.node), String(address.loop), String(address.connection)])
    }

    static func removePresence(uid: String, deviceId: String) -> PostgresPipeline.Statement {
        .init(sql: "DELETE FROM presence WHERE uid = $1 AND device_id = $2", parameters: [uid, deviceId])
    }

    // MARK: Timers

    /// Starts or replaces `timer`, due in `dueInMillis` on the database's
    /// clock: every node compares due times with that one clock, so a
    /// node whose clock is off moves no deadline.
    static func setTimer(_ timer: SignalingTimer, dueInMillis: Int64) -> PostgresPipeline.Statement {
        let (kind, subject, generation) = Self.row(of: timer)
        return .init(
            """
            INSERT INTO timers (kind, subject, due_at, generation) VALUES ($1, $2, \(Self.databaseNow) + $3, $4)
            ON CONFLICT (kind, subject) DO UPDATE
            SET due_at = excluded.due_at, generation = $4, claimed_until = NULL, attempts = 0, failed_at = NULL
            """, [kind, subject, String(dueInMillis), String(generation)])
    }

    static func deleteTimer(kind: String, subject: String) -> PostgresPipeline.Statement {
        .init("DELETE FROM timers WHERE kind = $1 AND subject = $2", [kind, subject])
    }

    /// Takes `timer` if it is still set and due (database clock): whichever
    /// node deletes the row fires it, once (it deleted a row: `affected`).
    static func takeTimer(_ timer: SignalingTimer) -> PostgresPipeline.Statement {
        let (kind, subject, generation) = Self.row(of: timer)
        return .init(
            """
            DELETE FROM timers WHERE kind = $1 AND subject = $2 AND generation = $3
            AND due_at <= \(Self.databaseNow)
            """, [kind, subject, String(generation)]
        )
    }

    /// Claims up to `limit` timers due (database clock), earliest first, for
    /// `claimMillis`: other nodes pass them over meanwhile, so one node
    /// runs the transaction of each. `SKIP LOCKED`: two nodes claiming at
    /// once take different rows rather than wait for each other.
    /// Quarantined timers are not taken.
    func claimDueTimers(limit: Int, claimMillis: Int64) throws(PostgresError) -> [SignalingTimer] {
        let rows = try execute(
            """
            UPDATE timers t SET claimed_until = \(Self.databaseNow) + $2
            FROM (
                SELECT kind, subject FROM timers
                WHERE due_at <= \(Self.databaseNow) AND failed_at IS NULL
                    AND (claimed_until IS NULL OR claimed_until <= \(Self.databaseNow))
                ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED
            ) due
            WHERE t.kind = due.kind AND t.subject = due.subject
            RETURNING t.kind, t.subject, t.generation
            """, [String(limit), String(claimMillis)])
        return (0 ..< rows.count).compactMap { row in
            guard let subject = rows.string(row, 1), let generation = rows.int64(row, 2) else { return nil }
            switch rows.string(row, 0) {
            case "ring": return .ring(sessionId: subject)
            case "grace": return .grace(uid: subject, generation: UInt64(bitPattern: generation))
            default: return nil
            }
        }
    }

    /// Counts a failed transaction for `timer`, which stays claimed for
    /// `retryMillis` before any node tries it again; the attempt that
    /// reaches `quarantineAfter` quarantines it. True when it did.
    func timerFailed(
        _ timer: SignalingTimer, retryMillis: Int64, quarantineAfter: Int
    ) throws(PostgresError) -> Bool {
        let (kind, subject, generation) = Self.row(of: timer)
        let rows = try execute(
            """
            UPDATE timers SET attempts = attempts + 1, claimed_until = \(Self.databaseNow) + $4,
                failed_at = CASE WHEN attempts + 1 >= $5 THEN \(Self.databaseNow) END
            WHERE kind = $1 AND subject = $2 AND generation = $3
            RETURNING failed_at IS NOT NULL
            """, [kind, subject, String(generation), String(retryMillis), String(quarantineAfter)])
        return rows.string(0, 0) == "t"
    }

    static func row(of timer: SignalingTimer) -> (kind: String, subject: String, generation: Int64) {
        switch timer {
        case .ring(let sessionId): ("ring", sessionId, 0)
        case .grace(let uid, let generation): ("grace", uid, Int64(bitPattern: generation))
        }
    }

    // MARK: Sequence, messages, shared values

    /// How many positions one transition may hand out: `change_seq`'s
    /// increment, fixed by schema migration 1.
    static let positionsPerTransition: Int64 = 8

    /// The largest body sent in the notification itself; PostgreSQL's
    /// payload limit is 8000 bytes.
    static let inlineMessageLimit = 7900

    /// Sends `body` to `channel` when the transaction commits: in the
    /// notification, or a row the notification names when it is too large
    /// (one statement either way, for a pipeline). A row's `created_at` is
    /// the database's clock, as is the cutoff that prunes it
    /// (``dropStaleMessages(olderThanMillis:)``).
    static func notify(_ channel: String, node: Int64, body: String) -> PostgresPipeline.Statement {
        guard body.utf8.count > Self.inlineMessageLimit else {
            return .init("SELECT pg_notify($1, $2)", [channel, body])
        }
        return .init(
            """
            WITH message AS (
                INSERT INTO node_messages (node_id, created_at, body) VALUES ($2, \(Self.databaseNow), $3) RETURNING id)
            SELECT pg_notify($1, '@' || id) FROM message
            """, [channel, String(node), body])
    }

    /// Messages older than `age` ms (database clock) that nobody took:
    /// their notification went to a node that was gone.
    func dropStaleMessages(olderThanMillis age: Int64) throws(PostgresError) {
        try execute("DELETE FROM node_messages WHERE created_at < \(Self.databaseNow) - $1", [String(age)])
    }

    /// Takes the message row `id` names (see ``notify(_:node:body:)``).
    func takeMessage(_ id: String) throws(PostgresError) -> String? {
        try execute("DELETE FROM node_messages WHERE id = $1 RETURNING body", [id]).string(0, 0)
    }

    /// The value every node shares under `name` in `table`: the first node
    /// to ask stores `proposed`; later ones read it.
    func sharedValue(_ name: String, in table: String, proposing proposed: String) throws(PostgresError) -> String {
        try execute(
            "INSERT INTO \(table) (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", [name, proposed])
        return try execute("SELECT value FROM \(table) WHERE name = $1", [name]).string(0, 0) ?? proposed
    }

    /// The table of what only the nodes' roles may read (PostgresSchema migration 10).
    static let secretsTable = "cluster_secrets"

    /// The ``secretsTable`` name of the token secret every node shares, kept in hex.
    static let tokenSecretSetting = "token_secret"

    /// The token secret every node shares: the one stored, or `proposed`, stored, when there is none.
    func sharedTokenSecret(proposing proposed: [UInt8]) throws(PostgresError) -> [UInt8] {
        Self.tokenSecret(
            stored: try sharedValue(
                Self.tokenSecretSetting, in: Self.secretsTable, proposing: TokenSecret.hex(proposed)))
    }

    /// A stored token secret's bytes: hex, as nodes and `migrate-store` write
    /// it; a value an operator put there that is not hex is its own bytes.
    static func tokenSecret(stored: String) -> [UInt8] { TokenSecret.decodeHex(stored) ?? Array(stored.utf8) }
}
