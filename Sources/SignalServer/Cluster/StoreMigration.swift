import Foundation
import SignalCore
import SignalProtocol
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Why `ringd migrate-store` failed or refused, for the operator: what it
/// was doing and what went wrong. PostgreSQL then holds nothing of the
/// store (its schema may have been created).
public struct StoreMigrationError: Error, Sendable, CustomStringConvertible {
    public let message: String

    init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// What ``StoreMigrator/migrate(from:to:now:)`` copied, and what it could not.
public struct StoreMigrationSummary: Sendable, CustomStringConvertible {
    /// What became of the token secret the single node generated.
    public enum TokenSecretOutcome: Sendable, Equatable {
        /// Stored as the cluster's: the node's tokens stay valid.
        case copied
        /// PostgreSQL already held the same secret (a migration ran before).
        case alreadyThere
        /// The data directory has none: `auth.tokenSecret` signed the node's tokens.
        case noneKept
    }

    /// The SQLite store copied.
    public var source: String
    public var calls = 0
    /// Of ``calls``, those the store held as ringing or ongoing, copied as
    /// ended with `server_restart`.
    public var endedLiveCalls = 0
    public var revocations = 0
    public var tokenSecret = TokenSecretOutcome.noneKept
    /// The highest position of the change sequence the node handed out or
    /// reserved, or an ended live call took; PostgreSQL's sequence continues above it.
    public var highestPosition: Int64 = 0
    /// Push tokens; a device or token a cluster node registered already keeps that newer registration.
    public var pushTokens = 0
    /// Users' profiles and do-not-disturb; a user a cluster node set already keeps that.
    public var users = 0
    /// The webhook outbox, every row as it stood (the pending ones are sent by the cluster).
    public var webhookDeliveries = 0
    public var milliseconds: Int64 = 0

    public var description: String {
        let seconds = String(format: "%.2f", Double(milliseconds) / 1000)
        let secretPath = FileSystem.parentDirectory(of: source) + "/" + TokenSecret.fileName
        let secret =
            switch tokenSecret {
            case .copied: "copied from \(secretPath) (tokens the node issued stay valid)"
            case .alreadyThere: "\(secretPath) already is PostgreSQL's"
            case .noneKept: "none in \(secretPath) (give every node the auth.tokenSecret the single node had)"
            }
        return """
            migrated \(source) into PostgreSQL in one transaction, \(seconds) s
              calls:            \(calls)\(endedLiveCalls > 0 ? " (\(endedLiveCalls) live: ended with server_restart)" : "")
              revocations:      \(revocations)
              push tokens:      \(pushTokens)
              users:            \(users)
              webhook outbox:   \(webhookDeliveries) deliveries
              token secret:     \(secret)
              highest position: \(highestPosition) (new changes take positions above it)
            """
    }
}

/// `ringd migrate-store`: copies a stopped single node's SQLite store into
/// the PostgreSQL database of a cluster that has no calls yet
/// (docs/MIGRATE-STORE.md). Every call keeps its `seq` and `change_seq`,
/// so the history cursors and resume positions clients hold stay valid;
/// the copy is one PostgreSQL transaction, so a failure leaves nothing half
/// copied, and the source is opened read-only.
public enum StoreMigrator {
    /// Calls per INSERT: 16 parameters each, far below PostgreSQL's limit
    /// of 65535 per statement, and enough rows that round trips stop
    /// counting (1e5 calls are 100 statements).
    static let batchSize = 1000
    /// The longest `cluster.leaseSeconds`: a node that renewed its lease
    /// more recently may still be serving.
    static let longestLeaseMillis: Int64 = 300_000

    /// Copies the store at `sqlitePath` into the database at `url` (a
    /// libpq connection string). `now` is when live calls end. Refuses,
    /// before it writes anything, a store another ringd serves, and a
    /// database that holds calls or another token secret, or where a node
    /// may be serving.
    public static func migrate(
        from sqlitePath: String, to url: String,
        now: Int64 = WallClock.milliseconds()
    ) throws(StoreMigrationError) -> StoreMigrationSummary {
        let started = ContinuousClock.now
        guard sqlitePath != CallStore.inMemoryPath else {
            throw StoreMigrationError("\(CallStore.inMemoryPath) is a store in memory: there is no file to migrate")
        }
        // StoreLock and SQLite would create what is missing; a typo must not.
        guard access(sqlitePath, F_OK) == 0 else { throw StoreMigrationError("no SQLite store at \(sqlitePath)") }
        let lock: StoreLock
        do throws(StoreError) {
            lock = try StoreLock(storePath: sqlitePath)
        } catch  where error.code == .inUse {
            throw StoreMigrationError(
                "\(error.message): stop it first; a store that is served changes while it is copied")
        } catch {
            throw StoreMigrationError("locking \(sqlitePath): \(error.message)")
        }
        defer { lock.release() }

        var summary = StoreMigrationSummary(source: sqlitePath)
        let source = try step("opening \(sqlitePath)") { () throws(StoreError) in
            try StoreConnection(readingOnly: sqlitePath)
        }
        let secret = try step("reading the token secret") { () throws(ConfigError) in
            try TokenSecret.kept(in: FileSystem.parentDirectory(of: sqlitePath))
        }
        // One snapshot for every read, should anything but ringd write the file.
        let (highestStored, live) = try step("reading \(sqlitePath)") { () throws(StoreError) in
            try source.database.execute("BEGIN")
            return (max(try source.lastChangeSeq(), try source.highestCallPosition()), try source.liveCalls())
        }
        let ended = try endLiveCalls(live, after: highestStored, now: now)
        summary.endedLiveCalls = ended.count
        summary.highestPosition = ended.values.map(\.seq).reduce(highestStored, max)

        let target: PostgresConnection
        do throws(PostgresError) {
            target = try PostgresConnection(url: url)
        } catch {
            throw StoreMigrationError(error.message)
        }
        try step("migrating the PostgreSQL schema") { () throws(PostgresError) in
            // libpq prints notices on stderr; the schema's "already exists, skipping" is none of the operator's business.
            try target.execute("SET client_min_messages = warning")
            try PostgresSchema.migrate(target)
        }
        try step("starting the PostgreSQL transaction") { () throws(PostgresError) in try target.execute("BEGIN") }
        do throws(StoreMigrationError) {
            try refuseUnlessEmpty(target, now: now)
            summary.tokenSecret = try store(secret, into: target)
            summary.calls = try copyCalls(from: source, into: target, replacing: ended)
            summary.revocations = try copyRevocations(from: source, into: target)
            summary.pushTokens = try copyPushTokens(from: source, into: target)
            summary.users = try copyUsers(from: source, into: target)
            summary.webhookDeliveries = try copyWebhookDeliveries(from: source, into: target)
            try step("continuing PostgreSQL's change sequence") { () throws(PostgresError) in
                try target.execute(
                    "SELECT setval('change_seq', greatest($1::bigint, (SELECT last_value FROM change_seq)))",
                    [String(summary.highestPosition)])
            }
            try step("committing the PostgreSQL transaction") { () throws(PostgresError) in try target.execute("COMMIT")
            }
        } catch {
            _ = try? target.execute("ROLLBACK")
            throw error
        }
        let elapsed = started.duration(to: .now).components
        summary.milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
        return summary
    }

    /// The live calls ended as a single node's start with `calls.onRestart:
    /// end` ends them: their node is stopped, and the cluster has no timer
    /// rows or presence for them, so copied as live they would ring and
    /// block their parties forever. Their changes take the positions after
    /// `position`, like the changes of that start; keyed by session id.
    private static func endLiveCalls(
        _ calls: [Call], after position: Int64, now: Int64
    )
        throws(StoreMigrationError) -> [String: Call]
    {
        var machine = CallStateMachine(settings: SignalingSettings())
        machine.continueSequence(after: position)
        let output = machine.restart(with: calls, now: SignalingTime(wall: now, monotonic: 0))
        let ended = Dictionary(output.changes.map { ($0.after.sessionId, $0.after) }, uniquingKeysWith: { $1 })
        guard ended.count == calls.count, ended.values.allSatisfy(\.status.isTerminal) else {
            throw StoreMigrationError("ending the \(calls.count) live calls: the state machine ended \(ended.count)")
        }
        return ended
    }

    /// Refuses, holding the lock on `calls` until the transaction ends so
    /// that no node adds one meanwhile, while a node may be serving (it
    /// read the token secret and the revocations at its start, and would
    /// not see those copied) or the database holds calls (copied positions
    /// would collide with theirs).
    private static func refuseUnlessEmpty(_ target: PostgresConnection, now: Int64) throws(StoreMigrationError) {
        let (node, holdsCalls) = try step("checking PostgreSQL") { () throws(PostgresError) in
            try target.execute("LOCK TABLE calls IN EXCLUSIVE MODE")
            let node = try target.execute(
                """
                SELECT name, renewed_at FROM nodes WHERE renewed_at > $1 ORDER BY renewed_at DESC LIMIT 1
                """, [String(now - longestLeaseMillis)])
            let calls = try target.execute("SELECT EXISTS (SELECT 1 FROM calls)")
            return (
                node.count > 0 ? (name: node.string(0, 0) ?? "?", renewedAt: node.int64(0, 1) ?? now) : nil,
                calls.string(0, 0) == "t"
            )
        }
        if let node {
            throw StoreMigrationError(
                """
                cluster node "\(node.name)" renewed its lease \(max(0, now - node.renewedAt) / 1000) s ago: stop every \
                node before migrating (a node reads the token secret and revocations only at its start); a node that \
                crashed counts until its lease is \(longestLeaseMillis / 60_000) minutes old
                """)
        }
        if holdsCalls {
            throw StoreMigrationError(
                """
                PostgreSQL already holds calls: migrate-store only fills a database without any (the copied calls keep \
                their positions, which the cluster's own would collide with)
                """)
        }
    }

    /// Stores the node's generated secret as the one every node shares, so
    /// the node's tokens stay valid; refuses when PostgreSQL has another,
    /// which a node generated at its first start and may have signed with.
    private static func store(
        _ secret: [UInt8]?, into target: PostgresConnection
    )
        throws(StoreMigrationError) -> StoreMigrationSummary.TokenSecretOutcome
    {
        guard let secret else { return .noneKept }
        let stored = try step("reading PostgreSQL's token secret") { () throws(PostgresError) in
            let rows = try target.execute(
                "SELECT value FROM \(PostgresConnection.secretsTable) WHERE name = $1",
                [PostgresConnection.tokenSecretSetting])
            return rows.count > 0 ? rows.string(0, 0) : nil
        }
        if let stored {
            guard PostgresConnection.tokenSecret(stored: stored) == secret else {
                throw StoreMigrationError(
                    """
                    PostgreSQL's \(PostgresConnection.secretsTable) holds another token secret (a cluster node generated it): \
                    with it, the tokens the single node issued stop working. If no token the cluster issued must stay valid, \
                    delete it (DELETE FROM \(PostgresConnection.secretsTable) WHERE name = '\(PostgresConnection.tokenSecretSetting)') \
                    and migrate again
                    """)
            }
            return .alreadyThere
        }
        try step("storing the token secret") { () throws(PostgresError) in
            try target.execute(
                "INSERT INTO \(PostgresConnection.secretsTable) (name, value) VALUES ($1, $2)",
                [PostgresConnection.tokenSecretSetting, TokenSecret.hex(secret)])
        }
        return .copied
    }

    /// Copies every call in seq order, a batch per INSERT, the live ones as
    /// `ended` has them; returns how many.
    private static func copyCalls(
        from source: StoreConnection, into target: PostgresConnection,
        replacing ended: [String: Call]
    ) throws(StoreMigrationError) -> Int {
        var copied = 0
        var after: Int64 = 0
        while true {
            let page = try step("reading calls") { () throws(StoreError) in
                try source.calls(after: after, limit: batchSize)
            }
            guard let last = page.last else { return copied }
            let rows = page.map { call, seq in
                PostgresConnection.parameters(of: ended[call.sessionId] ?? call) + [String(seq)]
            }
            try step("copying calls into PostgreSQL") { () throws(PostgresError) in
                try target.insert("INSERT INTO calls (\(PostgresConnection.callColumns), seq)", rows: rows)
            }
            copied += page.count
            after = last.seq
        }
    }

    /// Copies the revocations; one already in PostgreSQL keeps the later time.
    private static func copyRevocations(
        from source: StoreConnection, into target: PostgresConnection
    )
        throws(StoreMigrationError) -> Int
    {
        let revocations = try step("reading revocations") { () throws(StoreError) in try source.revocations() }
        return try copy(
            revocations.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] }, "revocations", into: target,
            "INSERT INTO revocations (uid, revoked_at)",
            then: "ON CONFLICT (uid) DO UPDATE SET revoked_at = greatest(revocations.revoked_at, excluded.revoked_at)")
    }

    /// Copies the push tokens. A device or token a cluster node registered
    /// already keeps that newer registration.
    private static func copyPushTokens(
        from source: StoreConnection, into target: PostgresConnection
    )
        throws(StoreMigrationError) -> Int
    {
        let tokens = try step("reading push tokens") { () throws(StoreError) in try source.pushTokens() }
        return try copy(
            tokens.map(PostgresConnection.parameters(of:)), "push tokens", into: target,
            "INSERT INTO push_tokens (uid, device_id, platform, token, topic, environment, updated_at, alert_token)")
    }

    /// Copies the users' profiles and do-not-disturb settings; a user a
    /// cluster node set already keeps that.
    private static func copyUsers(
        from source: StoreConnection, into target: PostgresConnection
    )
        throws(StoreMigrationError) -> Int
    {
        let users = try step("reading users") { () throws(StoreError) in try source.users() }
        let rows: [[String?]] = users.map(UserRowValues.init).map { row in
            [
                row.uid, row.name, row.avatarUrl, row.metadata, row.doNotDisturbMode,
                row.doNotDisturbUntil.map { String($0) }, String(row.updatedAt),
            ]
        }
        return try copy(rows, "users", into: target, "INSERT INTO users (\(UserRowValues.columns))")
    }

    /// Inserts `rows` with `head` and `tail` (``PostgresConnection/insert(_:rows:then:)``),
    /// ``batchSize`` at a time; returns how many.
    private static func copy(
        _ rows: [[String?]], _ what: String, into target: PostgresConnection, _ head: String,
        then tail: String = "ON CONFLICT DO NOTHING"
    ) throws(StoreMigrationError) -> Int {
        for start in stride(from: 0, to: rows.count, by: batchSize) {
            try step("copying \(what) into PostgreSQL") { () throws(PostgresError) in
                try target.insert(head, rows: Array(rows[start ..< min(start + batchSize, rows.count)]), then: tail)
            }
        }
        return rows.count
    }

    /// Every row of the webhook outbox, a page at a time: pending ones
    /// become the cluster's to send, settled ones stay listed.
    private static func copyWebhookDeliveries(
        from source: StoreConnection, into target: PostgresConnection
    )
        throws(StoreMigrationError) -> Int
    {
        var query = WebhookDeliveryQuery(limit: 100)
        var count = 0
        repeat {
            let page = try step("reading webhook deliveries") { () throws(StoreError) in
                try source.webhookDeliveries(query)
            }
            try step("copying webhook deliveries into PostgreSQL") { () throws(PostgresError) in
                try target.insert(page.deliveries)
            }
            count += page.deliveries.count
            query.cursor = page.next
        } while query.cursor != nil
        return count
    }

    /// Runs `body`, reporting its failure as what was being done and why.
    @discardableResult
    private static func step<Value, Failure: Error>(
        _ what: String, _ body: () throws(Failure) -> Value
    )
        throws(StoreMigrationError) -> Value
    {
        do throws(Failure) {
            return try body()
        } catch {
            let reason =
                switch error {
                case let error as StoreError: error.message
                case let error as PostgresError: error.message
                default: "\(error)"
                }
            throw StoreMigrationError("\(what): \(reason)")
        }
    }
}
