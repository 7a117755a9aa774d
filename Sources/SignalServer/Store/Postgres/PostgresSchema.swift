/// The schema of the PostgreSQL backend (docs/CLUSTER.md): the same
/// concepts as ``StoreSchema`` (calls, keyset pagination by `seq`,
/// revocations, the webhook outbox), plus what several nodes need: node leases, device
/// presence, due timers any node can take, messages between nodes.
/// Migrations are append-only, each in its own transaction with the version row.
enum PostgresSchema {
    struct Migration {
        let version: Int
        let sql: String
    }

    static let migrations: [Migration] = [
        Migration(
            version: 1,
            sql: """
                -- The store-wide change sequence (Call.seq), taken in the
                -- transition's transaction under the locks of the users it
                -- touches, so each user's positions follow commit order. A
                -- transition takes 8 positions at once (it makes at most 8 changes).
                CREATE SEQUENCE change_seq INCREMENT BY 8;

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
                -- A transition reads the live calls of the users it locks.
                CREATE INDEX calls_live_by_initiator ON calls (initiator) WHERE status = 'initiated' OR status = 'ongoing';
                CREATE INDEX calls_live_by_receiver ON calls (receiver) WHERE status = 'initiated' OR status = 'ongoing';

                -- A node's lease: it renews renewed_at every third of the lease
                -- time; a node whose lease is older is dead.
                -- Times are the database's clock. A node another one found
                -- lapsed is dead for good: it can neither renew nor take devices.
                CREATE TABLE nodes (
                    node_id BIGSERIAL PRIMARY KEY,
                    started_at BIGINT NOT NULL,
                    renewed_at BIGINT NOT NULL,
                    dead BOOLEAN NOT NULL DEFAULT false,
                    name TEXT NOT NULL,
                    -- The session the node listens on, ended once the node is dead.
                    listener_pid INT,
                    listener_started TIMESTAMPTZ
                );
                -- Which node holds each connected device, and where on it. No
                -- cascade: a dead node's devices leave through the disconnect
                -- rules (grace), one by one, before its row goes.
                CREATE TABLE presence (
                    uid TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    node_id BIGINT NOT NULL REFERENCES nodes (node_id),
                    loop INT NOT NULL,
                    connection BIGINT NOT NULL,
                    PRIMARY KEY (uid, device_id)
                );
                CREATE INDEX presence_by_node ON presence (node_id);

                -- Ring timeouts and grace periods as due rows: any live node
                -- fires one once due, so it fires when the node that set it died.
                CREATE TABLE timers (
                    kind TEXT NOT NULL,
                    subject TEXT NOT NULL,
                    due_at BIGINT NOT NULL,
                    generation BIGINT NOT NULL,
                    PRIMARY KEY (kind, subject)
                );
                CREATE INDEX timers_due ON timers (due_at);

                -- Messages for a node too large for a NOTIFY payload (8000
                -- bytes): the notification names the row, the node takes it.
                CREATE TABLE node_messages (
                    id BIGSERIAL PRIMARY KEY,
                    node_id BIGINT NOT NULL,
                    created_at BIGINT NOT NULL,
                    body TEXT NOT NULL
                );

                -- One token per device, as in SQLite (StoreSchema migration 5):
                -- a token belongs to one device at a time, which the unique
                -- index enforces when it moves.
                CREATE TABLE push_tokens (
                    uid TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    token TEXT NOT NULL,
                    topic TEXT,
                    environment TEXT,
                    updated_at BIGINT NOT NULL,
                    PRIMARY KEY (uid, device_id)
                );
                CREATE UNIQUE INDEX push_tokens_by_token ON push_tokens (platform, token);

                -- Values every node shares: the generated token secret.
                CREATE TABLE cluster_settings (
                    name TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );

                CREATE TABLE revocations (
                    uid TEXT PRIMARY KEY,
                    revoked_at BIGINT NOT NULL
                );

                -- The webhook outbox (docs/WEBHOOKS.md), SQLite's columns,
                -- written in the transaction of the change. claimed is the term
                -- of the webhook leader holding the row in memory: a leader
                -- claims what its term does not hold (a new leader takes over
                -- the old one's rows), and records an attempt only on a row its
                -- term still holds.
                CREATE TABLE webhook_deliveries (
                    endpoint TEXT NOT NULL,
                    seq BIGINT NOT NULL,
                    event_id TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    trigger TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    body TEXT NOT NULL,
                    status TEXT NOT NULL,
                    attempts INT NOT NULL,
                    next_attempt_at BIGINT NOT NULL,
                    last_status INT,
                    last_error TEXT,
                    updated_at BIGINT NOT NULL,
                    claimed BIGINT,
                    PRIMARY KEY (endpoint, seq)
                );
                CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (seq) WHERE status = 'pending';
                -- The REST listing, newest first, by status or not.
                CREATE INDEX webhook_deliveries_by_status ON webhook_deliveries (status, seq);
                CREATE INDEX webhook_deliveries_by_seq ON webhook_deliveries (seq);
                CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (updated_at) WHERE status != 'pending';
                """),
        Migration(
            version: 2,
            sql: """
                -- What the callee said when declining (rejectCall's reason).
                ALTER TABLE calls ADD COLUMN reject_reason TEXT;
                """),
        Migration(
            version: 3,
            sql: """
                -- Users' profiles and do-not-disturb, as in SQLite (StoreSchema
                -- migration 10); a row only while something is set.
                CREATE TABLE users (
                    uid TEXT PRIMARY KEY,
                    name TEXT,
                    avatar_url TEXT,
                    metadata TEXT,
                    dnd_mode TEXT NOT NULL DEFAULT 'off',
                    dnd_until BIGINT,
                    updated_at BIGINT NOT NULL
                );
                ALTER TABLE calls ADD COLUMN initiator_name TEXT;
                ALTER TABLE calls ADD COLUMN initiator_avatar_url TEXT;
                ALTER TABLE calls ADD COLUMN receiver_name TEXT;
                ALTER TABLE calls ADD COLUMN receiver_avatar_url TEXT;
                ALTER TABLE calls ADD COLUMN silent BOOLEAN NOT NULL DEFAULT false;
                """),
        Migration(
            version: 4,
            sql: """
                -- The callee devices that acknowledged the ring (`ringing`), a
                -- JSON array of device ids in the order they did; NULL: none.
                ALTER TABLE calls ADD COLUMN ringing_devices TEXT;
                """),
        Migration(
            version: 5,
            sql: """
                -- The caller's id for the initiateCall that placed the call: a
                -- retry on any node finds the call by it, and every initiate
                -- counts the caller's calls of the last minute
                -- (limits.initiatesPerMinute), both by initiator.
                ALTER TABLE calls ADD COLUMN client_call_id TEXT;
                CREATE INDEX calls_by_client_call_id ON calls (initiator, client_call_id)
                    WHERE client_call_id IS NOT NULL;
                CREATE INDEX calls_by_initiated_at ON calls (initiator, initiated_at);
                """),
        Migration(
            version: 6,
            sql: """
                -- An iOS device's regular APNs token beside its VoIP token, for
                -- missed-call alerts, as in SQLite (StoreSchema migration 13).
                ALTER TABLE push_tokens ADD COLUMN alert_token TEXT;
                """),
        Migration(
            version: 7,
            sql: """
                -- A due timer is claimed by one node before its transaction
                -- runs: other nodes pass it over until claimed_until (database
                -- clock, ms). attempts counts the transactions for it that
                -- failed; after a few, failed_at quarantines it (it is no
                -- longer looked for, so rows that always fail cannot hold up
                -- the rest). Setting the timer again clears all three.
                ALTER TABLE timers ADD COLUMN claimed_until BIGINT;
                ALTER TABLE timers ADD COLUMN attempts INT NOT NULL DEFAULT 0;
                ALTER TABLE timers ADD COLUMN failed_at BIGINT;
                DROP INDEX timers_due;
                CREATE INDEX timers_due ON timers (due_at) WHERE failed_at IS NULL;
                """),
        Migration(
            version: 8,
            sql: """
                -- The application_name a node's listening session carries, a
                -- random token: fencing finds that session by pid and token,
                -- both of which pg_stat_activity shows every role (the
                -- session's start time, listener_started, it shows only the
                -- session's own role, so it is no longer written).
                ALTER TABLE nodes ADD COLUMN listener_token TEXT;
                """),
        Migration(
            version: 9,
            sql: """
                -- The store's epoch, which auth results carry so that a device
                -- never resumes from a position the database may have lost
                -- (docs/CLUSTER.md, "Failover"): a random id made with the
                -- schema, the cluster's system identifier and the timeline
                -- it writes on (a promoted replica writes on a new one). A role
                -- not allowed pg_control_system() gets the server's start time
                -- instead, which changes on every restart and so on every
                -- failover too.
                INSERT INTO cluster_settings (name, value)
                VALUES ('store_id', left(replace(gen_random_uuid()::text, '-', ''), 16))
                ON CONFLICT (name) DO NOTHING;
                CREATE FUNCTION ringd_store_epoch() RETURNS text LANGUAGE plpgsql AS $$
                DECLARE
                    identity text;
                BEGIN
                    BEGIN
                        SELECT system_identifier::text || '.'
                               || ('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::bigint
                          INTO identity FROM pg_control_system();
                    EXCEPTION WHEN insufficient_privilege THEN
                        identity := 'started.' || (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint;
                    END;
                    RETURN (SELECT value FROM cluster_settings WHERE name = 'store_id') || '.' || identity;
                END $$;
                """),
        Migration(
            version: 10,
            sql: """
                -- The generated token secret, apart from the settings: whoever
                -- reads it can mint a token for any user, so only the nodes'
                -- roles should (docs/CLUSTER.md, "Database roles"). The REVOKE
                -- undoes default privileges that give every role every table.
                CREATE TABLE cluster_secrets (
                    name TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                REVOKE ALL ON cluster_secrets FROM PUBLIC;
                INSERT INTO cluster_secrets (name, value)
                SELECT name, value FROM cluster_settings WHERE name = 'token_secret';
                DELETE FROM cluster_settings WHERE name = 'token_secret';
                """),
        Migration(version: 11, sql: transitionFunctions),
    ]

    static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// The transaction advisory lock migrations run under.
    static let migrationLock: Int64 = 4242001

    /// Brings the database up to ``latestVersion``: the version table, then
    /// each missing migration in a transaction of its own. Concurrent nodes
    /// starting together serialize on an advisory lock.
    static func migrate(_ connection: PostgresConnection) throws(PostgresError) {
        try connection.transaction { () throws(PostgresError) in
            try connection.execute("SELECT pg_advisory_xact_lock(\(migrationLock))")
            // Under the lock: two sessions creating it at once can collide in
            // the catalog (a unique violation) though both say IF NOT EXISTS.
            try connection.execute("CREATE TABLE IF NOT EXISTS ringd_schema (version INT NOT NULL)")
            let current = try connection.execute("SELECT coalesce(max(version), 0) FROM ringd_schema").int64(0, 0) ?? 0
            guard current <= latestVersion else {
                throw PostgresError(
                    sqlState: nil,
                    message: "the database has schema version \(current); this build knows up to \(latestVersion)")
            }
            for migration in migrations where migration.version > current {
                try connection.run(script: migration.sql)
                try connection.execute("INSERT INTO ringd_schema (version) VALUES ($1)", [String(migration.version)])
            }
        }
    }
}
