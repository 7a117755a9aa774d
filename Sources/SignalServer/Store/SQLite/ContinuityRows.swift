import SignalCore
import SignalProtocol

/// What the store holds for a start to continue from.
public struct StoreContinuity: Sendable {
    /// The calls still `initiated` or `ongoing`, oldest first.
    public var liveCalls: [Call]
    /// Restart grace deadlines an earlier start gave: uid to ms since the Unix epoch.
    public var restartGraceDeadlines: [String: Int64]
    /// The highest position of the change sequence handed out or reserved.
    public var lastSeq: Int64
    /// The store's epoch, which positions are of (``Authentication/epoch``).
    public var epoch: String? = nil
    /// Every user's profile and do-not-disturb, which the machine keeps.
    public var users: [UserRecord] = []
}

/// What a device that comes back missed: the calls of its user changed
/// after a position of the sequence.
struct ChangedCalls: Sendable {
    /// The calls, each in its current state, oldest change first.
    var calls: [Call]
    /// Whether more changed than the limit allows, or the store could not
    /// tell within it which call the user was in at the position.
    var exceeded: Bool
}

extension ChangedCalls {
    /// Whether `call`, created by the position, may be the live call the
    /// user was in at it: any but one that was busy at once may.
    static func mayHaveBeenLive(_ call: Call) -> Bool { !(call.status == .busy && call.endedBy == nil) }

    /// What changed after position `seq`, at most `limit` calls, from the
    /// calls created after it (up to `limit + 1`, to tell an excess) and
    /// the calls created by then, newest first: all `limit` the store
    /// read, or fewer ending with the first that ``mayHaveBeenLive(_:)``.
    /// The one that may have been live is included when it changed since;
    /// `limit` of them none of which may have been means the store cannot
    /// tell which call the user was in.
    init(createdAfter: [Call], createdByAt: [Call], after seq: Int64, limit: Int) {
        var calls = createdAfter
        let candidate = createdByAt.first(where: Self.mayHaveBeenLive)
        if let candidate, candidate.seq > seq { calls.append(candidate) }
        let exceeded = createdAfter.count > limit || (candidate == nil && createdByAt.count == limit)
        calls.sort { $0.seq < $1.seq }
        self.init(calls: exceeded ? [] : calls, exceeded: exceeded)
    }
}

/// The change sequence and the restart grace deadlines, in `counters` and `restart_grace`.
extension StoreConnection {
    /// The calls of ?1 created after position ?2 (their seq is their first
    /// change's position), at most ?3 per party column.
    private static let createdAfterSQL = """
        SELECT * FROM (SELECT \(callColumns), seq FROM calls INDEXED BY calls_by_initiator
                       WHERE initiator = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3)
        UNION ALL
        SELECT * FROM (SELECT \(callColumns), seq FROM calls INDEXED BY calls_by_receiver
                       WHERE receiver = ?1 AND seq > ?2 AND initiator != ?1 ORDER BY seq LIMIT ?3)
        """

    /// The calls of ?1 created at or before position ?2, newest first, at most ?3.
    private static let createdByAtSQL = """
        SELECT * FROM (SELECT \(callColumns), seq FROM calls INDEXED BY calls_by_initiator
                       WHERE initiator = ?1 AND seq <= ?2 ORDER BY seq DESC LIMIT ?3)
        UNION ALL
        SELECT * FROM (SELECT \(callColumns), seq FROM calls INDEXED BY calls_by_receiver
                       WHERE receiver = ?1 AND seq <= ?2 AND initiator != ?1 ORDER BY seq DESC LIMIT ?3)
        ORDER BY \(callColumnCount + 1) DESC LIMIT ?3
        """

    /// The highest position handed out or reserved: a start continues above it.
    func lastChangeSeq() throws(StoreError) -> Int64 {
        try database.scalarInt64("SELECT value FROM counters WHERE name = 'change_seq'") ?? 0
    }

    /// The store's epoch (``Authentication/epoch``): 16 hex digits of the
    /// number its schema made.
    func storeEpoch() throws(StoreError) -> String {
        let number = UInt64(try database.scalarInt64("SELECT value FROM counters WHERE name = 'epoch'") ?? 0)
        let digits = String(number, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// Reserves the positions up to `seq` (the counter only grows).
    func reserveChangeSeq(through seq: Int64) throws(StoreError) {
        try database.execute("UPDATE counters SET value = ?1 WHERE name = 'change_seq' AND value < ?1", seq)
    }

    /// The calls `uid` is a party of that changed after position `seq`,
    /// oldest change first, at most `limit`. They are the calls created
    /// after it, and the one live call the user may have been in at it:
    /// the newest call created by then that was not busy at once (a user
    /// who was in a call when a newer one was created, or who was called
    /// then, was the party of no other live call, and any older call ended
    /// before that one was created), included when it changed since.
    func changedCalls(of uid: String, after seq: Int64, limit: Int) throws(StoreError) -> ChangedCalls {
        let createdAfter = try rows(Self.createdAfterSQL, uid: uid, seq: seq, limit: limit + 1) { _ in false }
        let createdByAt = try rows(
            Self.createdByAtSQL, uid: uid, seq: seq, limit: limit, through: ChangedCalls.mayHaveBeenLive)
        return ChangedCalls(createdAfter: createdAfter, createdByAt: createdByAt, after: seq, limit: limit)
    }

    /// The calls `sql` selects for `uid`, `seq` and `limit` (?1 to ?3), up
    /// to and including the first that `last` returns true for: the rest
    /// need not be decoded.
    private func rows(
        _ sql: String, uid: String, seq: Int64, limit: Int,
        through last: (Call) -> Bool
    ) throws(StoreError) -> [Call] {
        var calls: [Call] = []
        try database.forEachRow(sql, uid, seq, limit) { row throws(StoreError) in
            let call = try Self.decodeCall(row)
            calls.append(call)
            return !last(call)
        }
        return calls
    }

    /// Every restart grace deadline: uid to milliseconds since the Unix epoch.
    func restartGraceDeadlines() throws(StoreError) -> [String: Int64] {
        var deadlines: [String: Int64] = [:]
        try database.forEachRow("SELECT uid, deadline FROM restart_grace") { row in
            if let uid = row.optionalString(0) { deadlines[uid] = row.int64(1) }
            return true
        }
        return deadlines
    }

    func apply(_ change: RestartGraceChange) throws(StoreError) {
        switch change {
        case .set(let uid, let deadline):
            try database.execute(
                """
                INSERT INTO restart_grace (uid, deadline) VALUES (?1, ?2)
                ON CONFLICT (uid) DO UPDATE SET deadline = excluded.deadline
                """, uid, deadline)
        case .clear(let uid):
            try database.execute("DELETE FROM restart_grace WHERE uid = ?1", uid)
        }
    }
}
