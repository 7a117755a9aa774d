/// The schema of the PostgreSQL backend (issue 18, docs/CLUSTER.md): the
/// same concepts as ``StoreSchema`` (calls, keyset pagination by `seq`,
/// revocations, restart grace, push tokens, the webhook outbox to come),
/// plus what several nodes need: which user is in a live call (the row that
/// makes busy, glare and the accept race one atomic decision), node leases,
/// device presence and due timers any node can take. Migrations are
/// append-only, each in its own transaction with the version row.
enum PostgresSchema {
    struct Migration {
        let version: Int
        let sql: String
    }

    static let migrations: [Migration] = [
        Migration(version: 1, sql: """
            -- The store-wide change sequence (Call.seq), taken in the
            -- transition's transaction so positions follow commit order.
            CREATE SEQUENCE change_seq;

            -- seq is the position of a call's first change, as in SQLite:
            -- history cursors are seqs, and a resume finds the calls created
            -- after a position by it. A call saved without one takes the next.
            CREATE TABLE calls (
                seq BIGINT PRIMARY KEY DEFAULT nextval('change_seq'),
                session_id TEXT NOT NULL UNIQUE,
                call_type TEXT NOT NULL,
                status TEXT NOT NULL,
                initiator TEXT NOT NULL,
                receiver TEXT NOT NULL,
                initiator_device TEXT,
                initiated_at BIGINT NOT NULL,
                accepted_at BIGINT,
                ended_at BIGINT,
                accepted_by TEXT,
                ended_by TEXT,
                end_reason TEXT,
                timeout_ms BIGINT NOT NULL,
                metadata TEXT,  -- as sent: JSONB would reorder its members
                change_seq BIGINT NOT NULL
            );
            -- A history page is the newest of two scans in seq order, one per
            -- party column (PostgresCallLogs.swift); calls_between serves the
            -- peer filter in both directions and calls_missed the missed
            -- filter, whose condition the query repeats so the planner may
            -- prove it. The same indexes as SQLite's.
            CREATE INDEX calls_by_initiator ON calls (initiator, seq);
            CREATE INDEX calls_by_receiver ON calls (receiver, seq);
            CREATE INDEX calls_between ON calls (initiator, receiver, seq);
            CREATE INDEX calls_missed ON calls (receiver, seq)
                WHERE status = 'unanswered' OR status = 'cancelled' OR status = 'busy';
            CREATE INDEX calls_live ON calls (status) WHERE status = 'initiated' OR status = 'ongoing';

            -- One row per user in a live call. A transition that makes a
            -- call live inserts both parties' rows in its transaction; the
            -- primary key makes a second live call of a user fail (busy),
            -- whichever node tries, and SELECT ... FOR UPDATE on the rows
            -- orders the accept race and glare.
            CREATE TABLE live_parties (
                uid TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES calls (session_id)
            );

            -- A node's lease: it renews renewed_at; a node whose lease is
            -- older than the lease time is dead, and its devices gone.
            CREATE TABLE nodes (
                node_id TEXT PRIMARY KEY,
                renewed_at BIGINT NOT NULL
            );
            CREATE TABLE presence (
                uid TEXT NOT NULL,
                device_id TEXT NOT NULL,
                node_id TEXT NOT NULL REFERENCES nodes (node_id) ON DELETE CASCADE,
                connected_at BIGINT NOT NULL,
                PRIMARY KEY (uid, device_id)
            );

            -- Ring timeouts and grace periods as rows any live node takes
            -- with FOR UPDATE SKIP LOCKED once due, so they fire when the
            -- node that set them died.
            CREATE TABLE timers (
                kind TEXT NOT NULL,
                subject TEXT NOT NULL,
                due_at BIGINT NOT NULL,
                PRIMARY KEY (kind, subject)
            );
            CREATE INDEX timers_due ON timers (due_at);

            CREATE TABLE revocations (
                uid TEXT PRIMARY KEY,
                revoked_at BIGINT NOT NULL
            );
            CREATE TABLE restart_grace (
                uid TEXT PRIMARY KEY,
                deadline BIGINT NOT NULL
            );
            """),
    ]

    static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Brings the database up to ``latestVersion``: the version table, then
    /// each missing migration in a transaction of its own. Concurrent nodes
    /// starting together serialize on an advisory lock.
    static func migrate(_ connection: PostgresConnection) throws(PostgresError) {
        try connection.execute("CREATE TABLE IF NOT EXISTS ringd_schema (version INT NOT NULL)")
        try connection.transaction { () throws(PostgresError) in
            try connection.execute("SELECT pg_advisory_xact_lock(4242001)")
            let current = try connection.execute("SELECT coalesce(max(version), 0) FROM ringd_schema").int64(0, 0) ?? 0
            guard current <= latestVersion else {
                throw PostgresError(sqlState: nil, message: "the database has schema version \(current); this build knows up to \(latestVersion)")
            }
            for migration in migrations where migration.version > current {
                try connection.run(script: migration.sql)
                try connection.execute("INSERT INTO ringd_schema (version) VALUES ($1)", [String(migration.version)])
            }
        }
    }
}
