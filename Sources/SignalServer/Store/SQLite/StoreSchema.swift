/// One step of the schema's history: the SQL that takes the database from
/// the previous version to ``version``.
struct StoreMigration {
    /// The `PRAGMA user_version` after this step.
    let version: Int64
    /// The statements of the step; they run in one transaction.
    let sql: String
}

/// The store's schema: connection settings and the ordered migrations.
enum StoreSchema {
    /// How long a statement waits for a lock held by another connection (a
    /// backup tool, the sqlite3 shell) before failing with `SQLITE_BUSY`.
    static let busyTimeoutMilliseconds: Int32 = 5000

    /// Every migration, oldest first; versions count up from 1. Append only:
    /// a released step never changes, a change is a new step.
    static let migrations: [StoreMigration] = [
        StoreMigration(
            version: 1,
            sql: """
                -- One row per call, the full snapshot the server last saved. seq
                -- orders calls by first save and never reuses a value
                -- (AUTOINCREMENT), which keyset pagination relies on.
                CREATE TABLE calls (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    session_id TEXT NOT NULL UNIQUE,
                    call_type TEXT NOT NULL,
                    status TEXT NOT NULL,
                    initiator TEXT NOT NULL,
                    receiver TEXT NOT NULL,
                    initiated_at INTEGER NOT NULL,
                    accepted_at INTEGER,
                    ended_at INTEGER,
                    accepted_by TEXT,
                    ended_by TEXT,
                    end_reason TEXT,
                    timeout INTEGER NOT NULL,
                    metadata TEXT
                );
                -- Live calls only, for recovery at start-up and shutdown; terminal
                -- calls, nearly all of the table, stay out of it.
                CREATE INDEX calls_live ON calls (status) WHERE status IN ('initiated', 'ongoing');

                -- Each party's view of a call: two rows per call, keyed for
                -- "this user's calls, newest first". The filters of a history
                -- query each have an index that keeps the seq order: peer and
                -- status lead their own (uid, _, seq) index, and missed has a
                -- partial one. Direction and call type have two values each, so
                -- an index would at best halve the rows read: they filter the
                -- scan instead, of the primary key's (uid, seq) or of another
                -- filter's index.
                CREATE TABLE call_log (
                    uid TEXT NOT NULL,
                    seq INTEGER NOT NULL REFERENCES calls (seq),
                    direction TEXT NOT NULL,
                    peer TEXT NOT NULL,
                    call_type TEXT NOT NULL,
                    status TEXT NOT NULL,
                    missed INTEGER NOT NULL,
                    PRIMARY KEY (uid, seq)
                ) WITHOUT ROWID;
                CREATE INDEX call_log_peer ON call_log (uid, peer, seq);
                CREATE INDEX call_log_status ON call_log (uid, status, seq);
                CREATE INDEX call_log_missed ON call_log (uid, seq) WHERE missed = 1;

                -- Tokens of uid issued at or before revoked_at (ms) are invalid.
                CREATE TABLE revocations (
                    uid TEXT PRIMARY KEY,
                    revoked_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                """),
        StoreMigration(
            version: 2,
            sql: """
                -- A user's history is read from calls itself: a change of a call
                -- now writes one row, not three (the call and two call_log rows,
                -- with their indexes). Each party gets an index in seq order, so
                -- a page is the newest of two ordered scans; calls_between
                -- serves the peer filter for both directions, and calls_missed
                -- holds the incoming calls that count as missed. The indexes
                -- only change when a call is inserted or ends missed, never on
                -- the updates in between. Status has no index of its own (it
                -- changes on every save): it filters the party scans.
                DROP TABLE call_log;
                CREATE INDEX calls_by_initiator ON calls (initiator, seq);
                CREATE INDEX calls_by_receiver ON calls (receiver, seq);
                CREATE INDEX calls_between ON calls (initiator, receiver, seq);
                CREATE INDEX calls_missed ON calls (receiver, seq) WHERE status IN ('unanswered', 'cancelled', 'busy');
                """),
        StoreMigration(
            version: 3,
            sql: """
                -- Every change of a call takes the next position of one
                -- store-wide sequence. A call's first change gives it its seq
                -- (the order of first save stays the order of positions), and
                -- change_seq holds the position of its latest change, so a
                -- device coming back asks for the calls changed after the last
                -- position it saw: those created after it (the party indexes
                -- above, in seq order) and the one call it could be in then.
                -- change_seq has no index, so a change writes no more pages than
                -- before. Calls saved before this version read as last changed
                -- at position 0, before any a device can hold (no rewrite of
                -- the table). counters keeps the highest position handed out
                -- or reserved, so a start continues above every one.
                ALTER TABLE calls ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
                CREATE TABLE counters (
                    name TEXT PRIMARY KEY,
                    value INTEGER NOT NULL
                ) WITHOUT ROWID;
                INSERT INTO counters (name, value)
                VALUES ('change_seq', max(coalesce((SELECT max(seq) FROM calls), 0),
                                          coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'calls'), 0)));

                -- The restart grace deadline (ms) of each party of a call a start
                -- restored that has not come back yet: a later start keeps it
                -- rather than granting a new one.
                CREATE TABLE restart_grace (
                    uid TEXT PRIMARY KEY,
                    deadline INTEGER NOT NULL
                ) WITHOUT ROWID;
                """),
        StoreMigration(
            version: 4,
            sql: """
                -- The webhook outbox: one row per event and endpoint, written in
                -- the transaction that commits the call's change, so an event
                -- exists exactly when its change does. seq is the change's
                -- position: rows of one endpoint in seq order are the events in
                -- the order they happened, and the pending ones are read back at
                -- start. The body is kept as sent, so every retry is the same bytes.
                CREATE TABLE webhook_deliveries (
                    endpoint TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    event_id TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    trigger TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    body TEXT NOT NULL,
                    status TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    next_attempt_at INTEGER NOT NULL,
                    last_status INTEGER,
                    last_error TEXT,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (endpoint, seq)
                ) WITHOUT ROWID;
                -- The REST listing, newest first, by status or not.
                CREATE INDEX webhook_deliveries_by_status ON webhook_deliveries (status, seq);
                CREATE INDEX webhook_deliveries_by_seq ON webhook_deliveries (seq);
                -- What pruning deletes: settled rows by age.
                CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (updated_at) WHERE status != 'pending';
                """),
        StoreMigration(
            version: 5,
            sql: """
                -- One VoIP push token per device (a user's device ids are the
                -- user's own, so the key is both). A token belongs to one device
                -- at a time: registering it elsewhere (another user signed in on
                -- the phone) moves it, which the unique index enforces.
                CREATE TABLE push_tokens (
                    uid TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    token TEXT NOT NULL,
                    topic TEXT,
                    environment TEXT,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (uid, device_id)
                ) WITHOUT ROWID;
                CREATE UNIQUE INDEX push_tokens_by_token ON push_tokens (platform, token);
                """),
        StoreMigration(
            version: 6,
            sql: """
                -- The ring timeout exactly, in milliseconds (initiateCall's
                -- timeoutMs); timeout keeps the whole seconds, rounded up. NULL
                -- for the calls saved before, which rang for timeout seconds:
                -- read as timeout * 1000, so the table is not rewritten.
                ALTER TABLE calls ADD COLUMN timeout_ms INTEGER;
                """),
        StoreMigration(
            version: 7,
            sql: """
                -- The partial indexes' conditions as OR terms. SQLite evaluates
                -- `status IN (…)` in an index's WHERE by filling a temporary
                -- b-tree with the list, a pager and an 87 KB page cache of its
                -- own, each time a row is written: two per save of a call, the
                -- bulk of the store's allocations per call. The queries these
                -- indexes serve use the same OR terms, so they still match.
                DROP INDEX calls_live;
                CREATE INDEX calls_live ON calls (status) WHERE status = 'initiated' OR status = 'ongoing';
                DROP INDEX calls_missed;
                CREATE INDEX calls_missed ON calls (receiver, seq)
                    WHERE status = 'unanswered' OR status = 'cancelled' OR status = 'busy';
                """),
        StoreMigration(
            version: 8,
            sql: """
                -- The caller's device that placed the call, so that `signal`
                -- knows both devices in it. NULL for calls saved before: such a
                -- call, still live after the upgrade, cannot relay signals.
                ALTER TABLE calls ADD COLUMN initiator_device TEXT;
                """),
        StoreMigration(
            version: 9,
            sql: """
                -- What the callee said when declining (rejectCall's reason).
                ALTER TABLE calls ADD COLUMN reject_reason TEXT;
                """),
        StoreMigration(
            version: 10,
            sql: """
                -- Users' profiles and do-not-disturb; a row only while something is set.
                CREATE TABLE users (
                    uid TEXT PRIMARY KEY,
                    name TEXT,
                    avatar_url TEXT,
                    metadata TEXT,
                    dnd_mode TEXT NOT NULL DEFAULT 'off',
                    dnd_until INTEGER,
                    updated_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                -- The parties' profiles as they were when the call was placed,
                -- and whether it rang silently (the callee's do-not-disturb).
                ALTER TABLE calls ADD COLUMN initiator_name TEXT;
                ALTER TABLE calls ADD COLUMN initiator_avatar_url TEXT;
                ALTER TABLE calls ADD COLUMN receiver_name TEXT;
                ALTER TABLE calls ADD COLUMN receiver_avatar_url TEXT;
                ALTER TABLE calls ADD COLUMN silent INTEGER NOT NULL DEFAULT 0;
                """),
        StoreMigration(
            version: 11,
            sql: """
                -- The callee devices that acknowledged the ring (`ringing`), a
                -- JSON array of device ids in the order they did; NULL: none.
                ALTER TABLE calls ADD COLUMN ringing_devices TEXT;
                """),
        StoreMigration(
            version: 12,
            sql: """
                -- The caller's id for the initiateCall that placed the call,
                -- so that its history and webhooks show it (retries are
                -- matched in memory on one node).
                ALTER TABLE calls ADD COLUMN client_call_id TEXT;
                """),
        StoreMigration(
            version: 13,
            sql: """
                -- An iOS device's regular APNs token beside its VoIP token, for
                -- missed-call alerts (a VoIP token cannot show one). NULL: no
                -- alert for that device.
                ALTER TABLE push_tokens ADD COLUMN alert_token TEXT;
                """),
        StoreMigration(
            version: 14,
            sql: """
                -- The store's epoch: a random number made with the store (a
                -- store made anew, or in memory, gets another), which auth
                -- results carry so that a device never resumes from a
                -- position of another store.
                INSERT INTO counters (name, value) VALUES ('epoch', random() & 9223372036854775807);
                """),
    ]

    /// The schema version this build writes.
    static var latestVersion: Int64 { migrations.last?.version ?? 0 }

    /// Configures a freshly opened connection and brings its schema up to
    /// date: WAL journal (the store checkpoints it on a thread of its own,
    /// see ``StoreCheckpointer``), `synchronous` NORMAL (a committed transaction
    /// survives a process kill; the last ones may be lost on power loss) or
    /// FULL (they survive power loss too, at an fsync per commit), the busy
    /// timeout, foreign keys, then every migration the file has not had yet.
    static func prepare(_ database: SQLiteDatabase, synchronousFull: Bool) throws(StoreError) {
        database.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        let mode = try database.scalarText("PRAGMA journal_mode = WAL")
        try database.executeScript("PRAGMA synchronous = \(synchronousFull ? "FULL" : "NORMAL")")
        try database.executeScript("PRAGMA foreign_keys = ON")
        guard mode?.lowercased() == "wal" else {
            throw StoreError(.database, "\(database.path) cannot use WAL (journal mode \(mode ?? "unknown"))")
        }
        try migrate(database)
    }

    /// Configures a connection to an in-memory database and creates the
    /// schema. There is no log (SQLite keeps the journal of a memory
    /// database in memory) and nothing to sync; temporary tables and sort
    /// spills stay in memory too, so the store writes no file at all.
    static func prepareInMemory(_ database: SQLiteDatabase) throws(StoreError) {
        try database.executeScript("PRAGMA temp_store = MEMORY")
        try database.executeScript("PRAGMA foreign_keys = ON")
        try migrate(database)
    }

    /// Runs the migrations newer than the file's `user_version`, each in its
    /// own transaction that also sets `user_version`, so an interrupted
    /// migration leaves the file at the previous version.
    static func migrate(_ database: SQLiteDatabase) throws(StoreError) {
        let current = try database.scalarInt64("PRAGMA user_version") ?? 0
        guard current <= latestVersion else {
            throw StoreError(
                .schemaTooNew, "\(database.path) has schema version \(current); this build knows up to \(latestVersion)"
            )
        }
        for migration in migrations where migration.version > current {
            do throws(StoreError) {
                try database.executeScript("BEGIN IMMEDIATE")
                try database.executeScript(migration.sql)
                try database.executeScript("PRAGMA user_version = \(migration.version)")
                try database.executeScript("COMMIT")
            } catch {
                if database.isInTransaction { try? database.executeScript("ROLLBACK") }
                throw StoreError(.database, "migration to version \(migration.version) failed: \(error.message)")
            }
        }
    }
}
