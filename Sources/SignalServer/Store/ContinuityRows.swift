import SignalProtocol

/// A restart grace deadline to keep or drop (see ``CallStateMachine/restore(_:graceDeadlines:now:)``).
public enum RestartGraceChange: Hashable, Sendable {
    /// `uid` must be back by `deadline` (ms since the Unix epoch).
    case set(uid: String, deadline: Int64)
    /// `uid` came back, or its call ended.
    case clear(uid: String)
}

/// What the store holds for a start to continue from.
public struct StoreContinuity: Sendable {
    /// The calls still `initiated` or `ongoing`, oldest first.
    public var liveCalls: [Call]
    /// Restart grace deadlines an earlier start gave: uid to ms since the Unix epoch.
    public var restartGraceDeadlines: [String: Int64]
    /// The last position of the change sequence.
    public var lastSeq: Int64
}

/// What a device that comes back missed: the calls of its user changed
/// after a position of the sequence.
struct ChangedCalls: Sendable {
    /// The calls, each in its current state, oldest change first; at most
    /// the limit asked for plus one (so the caller sees it was exceeded).
    var calls: [Call]
    /// The last position the store holds.
    var lastSeq: Int64
}

/// The change sequence and the restart grace deadlines, in `counters` and `restart_grace`.
extension StoreConnection {
    private static let changedCallsSQL = """
        SELECT * FROM (SELECT \(callColumns) FROM calls INDEXED BY calls_changed_by_initiator
                       WHERE initiator = ?1 AND change_seq > ?2 ORDER BY change_seq LIMIT ?3)
        UNION ALL
        SELECT * FROM (SELECT \(callColumns) FROM calls INDEXED BY calls_changed_by_receiver
                       WHERE receiver = ?1 AND change_seq > ?2 ORDER BY change_seq LIMIT ?3)
        ORDER BY 14 LIMIT ?3
        """

    /// The last position of the change sequence the store holds.
    func lastChangeSeq() throws(StoreError) -> Int64 {
        try reportingSQLiteErrors { () throws(SQLiteError) in
            try database.scalarInt64("SELECT value FROM counters WHERE name = 'change_seq'") ?? 0
        }
    }

    /// Records `seq` as the last position given out (positions only grow).
    func advanceChangeSeq(to seq: Int64) throws(StoreError) {
        try reportingSQLiteErrors { () throws(SQLiteError) in
            let statement = try database.statement("UPDATE counters SET value = ?1 WHERE name = 'change_seq' AND value < ?1")
            defer { statement.reset() }
            try statement.bind(seq, at: 1)
            try statement.run()
        }
    }

    /// The calls `uid` is a party of that changed after `seq`, oldest change
    /// first, at most `limit`.
    func changedCalls(of uid: String, after seq: Int64, limit: Int) throws(StoreError) -> ChangedCalls {
        let lastSeq = try lastChangeSeq()
        let statement = try reportingSQLiteErrors { () throws(SQLiteError) in
            let statement = try database.statement(Self.changedCallsSQL)
            try statement.bind(uid, at: 1)
            try statement.bind(seq, at: 2)
            try statement.bind(Int64(limit), at: 3)
            return statement
        }
        defer { statement.reset() }
        var calls: [Call] = []
        while try reportingSQLiteErrors({ () throws(SQLiteError) in try statement.step() }) == .row {
            calls.append(try Self.decodeCall(statement))
        }
        return ChangedCalls(calls: calls, lastSeq: lastSeq)
    }

    /// Every restart grace deadline: uid to milliseconds since the Unix epoch.
    func restartGraceDeadlines() throws(StoreError) -> [String: Int64] {
        try reportingSQLiteErrors { () throws(SQLiteError) in
            let statement = try database.statement("SELECT uid, deadline FROM restart_grace")
            defer { statement.reset() }
            var deadlines: [String: Int64] = [:]
            while try statement.step() == .row {
                if let uid = statement.string(at: 0) { deadlines[uid] = statement.int64(at: 1) }
            }
            return deadlines
        }
    }

    func apply(_ change: RestartGraceChange) throws(StoreError) {
        try reportingSQLiteErrors { () throws(SQLiteError) in
            switch change {
            case .set(let uid, let deadline):
                let statement = try database.statement("""
                    INSERT INTO restart_grace (uid, deadline) VALUES (?1, ?2)
                    ON CONFLICT (uid) DO UPDATE SET deadline = excluded.deadline
                    """)
                defer { statement.reset() }
                try statement.bind(uid, at: 1)
                try statement.bind(deadline, at: 2)
                try statement.run()
            case .clear(let uid):
                let statement = try database.statement("DELETE FROM restart_grace WHERE uid = ?1")
                defer { statement.reset() }
                try statement.bind(uid, at: 1)
                try statement.run()
            }
        }
    }
}
