import SignalProtocol

/// Calls in the `calls` table.
extension StoreConnection {
    /// The `calls` columns a ``Call`` is decoded from, in the order
    /// ``decodeCall(_:)`` reads them (``callColumnCount`` of them). A call
    /// saved before `timeout_ms` existed rang for its whole seconds.
    static let callColumns =
        "session_id, call_type, status, initiator, receiver, initiated_at, accepted_at, ended_at, "
        + "accepted_by, ended_by, end_reason, coalesce(timeout_ms, timeout * 1000), metadata, change_seq, "
        + "initiator_device, reject_reason, initiator_name, initiator_avatar_url, receiver_name, "
        + "receiver_avatar_url, silent"
    /// How many columns ``callColumns`` names: a query selecting more reads them from this index on.
    static let callColumnCount: Int32 = 21

    /// Replaces every field of the stored call but its session id and
    /// parties; matches no row when the call is new or names other parties.
    private static let updateCallSQL = """
        UPDATE calls SET call_type = ?2, status = ?3, initiated_at = ?6, accepted_at = ?7, ended_at = ?8,
                         accepted_by = ?9, ended_by = ?10, end_reason = ?11, timeout = ?12, metadata = ?13,
                         change_seq = ?14, timeout_ms = ?15, initiator_device = ?17, reject_reason = ?18,
                         initiator_name = ?19, initiator_avatar_url = ?20, receiver_name = ?21,
                         receiver_avatar_url = ?22, silent = ?23
        WHERE session_id = ?1 AND initiator = ?4 AND receiver = ?5
        """

    /// A new call's seq is the position of its first change (?16); NULL
    /// (a call saved without a position, as tests do) takes the next one.
    private static let insertCallSQL = """
        INSERT INTO calls (session_id, call_type, status, initiator, receiver, initiated_at, accepted_at,
                           ended_at, accepted_by, ended_by, end_reason, timeout, metadata, change_seq, timeout_ms, seq,
                           initiator_device, reject_reason, initiator_name, initiator_avatar_url, receiver_name,
                           receiver_avatar_url, silent)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
                ?23)
        """

    private static let callBySessionSQL = "SELECT \(callColumns) FROM calls WHERE session_id = ?1"

    /// The live calls, oldest first; the condition matches the `calls_live`
    /// partial index word for word, so SQLite uses it.
    private static let liveCallsSQL = """
        SELECT \(callColumns) FROM calls WHERE (status = 'initiated' OR status = 'ongoing') ORDER BY seq
        """

    /// Saves the snapshot `call` by session id (insert or full update); both
    /// parties' histories read it from there. A call's parties never change:
    /// a snapshot naming others fails with ``StoreErrorCode/callConflict``.
    ///
    /// An UPDATE first, and an INSERT only when it matched no row: every
    /// save but a call's first is an update, and a plain UPDATE costs about
    /// half of an `INSERT … ON CONFLICT DO UPDATE` on this AUTOINCREMENT
    /// table, which also rewrites `sqlite_sequence` each time.
    func save(_ call: Call) throws(StoreError) {
        do throws(StoreError) {
            if try run(Self.updateCallSQL, with: call) > 0 { return }
            try run(Self.insertCallSQL, with: call, inserting: true)
        } catch  where error.sqlite?.extendedCode == SQLiteError.constraintUnique {
            throw StoreError(
                .callConflict,
                "call \(call.sessionId) is stored with other parties than \(call.initiator) and \(call.receiver)")
        }
    }

    /// Runs `sql` with the fields of `call` bound as ?1 through ?15 and ?17
    /// through ?23 (session id, call type, status, initiator, receiver, times,
    /// devices, end reason, timeout in seconds, metadata, sequence position,
    /// timeout in milliseconds; the initiator's device; the reject reason;
    /// the parties' names and pictures; silent), and, `inserting`, its seq as
    /// ?16 (NULL otherwise, which the update does not read); returns the rows
    /// changed. The seconds, rounded up, stay for whoever reads the table as before.
    @discardableResult
    private func run(_ sql: String, with call: Call, inserting: Bool = false) throws(StoreError) -> Int {
        try database.execute(
            sql, call.sessionId, call.callType.rawValue, call.status.rawValue, call.initiator, call.receiver,
            call.initiatedAt, call.acceptedAt, call.endedAt, call.acceptedBy, call.endedBy, call.endReason?.rawValue,
            Int64(call.timeout), call.metadata?.serialized, call.seq, call.timeoutMs,
            inserting && call.seq > 0 ? call.seq : nil, call.initiatorDevice, call.rejectReason, call.initiatorName,
            call.initiatorAvatarUrl, call.receiverName, call.receiverAvatarUrl, call.silent ? Int64(1) : Int64(0))
    }

    func call(sessionId: String) throws(StoreError) -> Call? {
        try database.fetchOne(Self.callBySessionSQL, sessionId, decode: Self.decodeCall)
    }

    /// The calls still `initiated` or `ongoing`, oldest first.
    func liveCalls() throws(StoreError) -> [Call] {
        try database.fetchAll(Self.liveCallsSQL, decode: Self.decodeCall)
    }

    /// The ``Call`` in the first ``callColumnCount`` columns of the current row (see
    /// ``callColumns``). Fails on a value this build does not know.
    static func decodeCall(_ row: SQLiteRow) throws(StoreError) -> Call {
        guard let sessionId = row.optionalString(0), let initiator = row.optionalString(3),
            let receiver = row.optionalString(4)
        else { throw StoreError(.corruptRow, "a call row lacks its session id or parties") }
        return try CallRowValues(
            sessionId: sessionId, callType: row.optionalString(1), status: row.optionalString(2),
            initiator: initiator, receiver: receiver, initiatorDevice: row.optionalString(14),
            initiatedAt: row.int64(5), acceptedAt: row.optionalInt64(6), endedAt: row.optionalInt64(7),
            acceptedBy: row.optionalString(8), endedBy: row.optionalString(9), endReason: row.optionalString(10),
            timeoutMs: row.int64(11), metadata: row.optionalString(12), seq: row.int64(13),
            rejectReason: row.optionalString(15), initiatorName: row.optionalString(16),
            initiatorAvatarUrl: row.optionalString(17), receiverName: row.optionalString(18),
            receiverAvatarUrl: row.optionalString(19), silent: row.int64(20) != 0
        ).decoded()
    }
}
