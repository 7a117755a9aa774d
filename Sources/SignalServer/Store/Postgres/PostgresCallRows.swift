import SignalProtocol

/// Calls in PostgreSQL's `calls` table: the same snapshots as
/// ``StoreConnection``'s SQLite rows (CallRows.swift), read and written
/// with bound text parameters.
extension PostgresConnection {
    /// The columns a ``Call`` is decoded from, in ``decodeCall(_:_:)``'s order.
    static let callColumns =
        "session_id, call_type, status, initiator, receiver, initiator_device, initiated_at, "
        + "accepted_at, ended_at, accepted_by, ended_by, end_reason, timeout_ms, metadata, change_seq, reject_reason, "
        + "ringing_devices, initiator_name, initiator_avatar_url, receiver_name, receiver_avatar_url, silent, "
        + "client_call_id"
    /// How many columns ``callColumns`` names: a query selecting more reads them from this index on.
    static let callColumnCount = 23

    /// Every field but the session id and the parties; matches no row when
    /// the call is new or names other parties.
    private static let updateCallSQL = """
        UPDATE calls SET call_type = $2, status = $3, initiator_device = $6, initiated_at = $7, accepted_at = $8,
                         ended_at = $9, accepted_by = $10, ended_by = $11, end_reason = $12, timeout_ms = $13,
                         metadata = $14, change_seq = $15, reject_reason = $16, ringing_devices = $17,
                         initiator_name = $18, initiator_avatar_url = $19, receiver_name = $20,
                         receiver_avatar_url = $21, silent = $22, client_call_id = $23
        WHERE session_id = $1 AND initiator = $4 AND receiver = $5
        """
    /// A new call's seq is the position of its first change ($15), as in
    /// SQLite; a call saved without a position (0, as tests do) takes the next one.
    private static let insertCallSQL = """
        INSERT INTO calls (session_id, call_type, status, initiator, receiver, initiator_device, initiated_at,
                           accepted_at, ended_at, accepted_by, ended_by, end_reason, timeout_ms, metadata, change_seq,
                           reject_reason, ringing_devices, initiator_name, initiator_avatar_url, receiver_name,
                           receiver_avatar_url, silent, client_call_id, seq)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
                coalesce(nullif($15::bigint, 0), nextval('change_seq')))
        """

    /// Saves the snapshot `call` by session id (an update, else an insert).
    /// A call's parties never change: a snapshot naming others fails with
    /// ``StoreErrorCode/callConflict``.
    func save(_ call: Call) throws(StoreError) {
        let parameters = Self.parameters(of: call)
        do throws(PostgresError) {
            if try execute(Self.updateCallSQL, parameters).affected > 0 { return }
            try execute(Self.insertCallSQL, parameters)
        } catch  where error.sqlState == PostgresError.uniqueViolation {
            throw StoreError(
                .callConflict,
                "call \(call.sessionId) is stored with other parties than \(call.initiator) and \(call.receiver)")
        } catch {
            throw StoreError(error)
        }
    }

    /// The statement that saves a transition's `change` in a pipeline: an
    /// update when the call was read (under its parties' locks, so its
    /// row is there and names them), an insert when the change created it,
    /// which fails as a unique violation when the session id is taken
    /// (``isCallConflict(_:)``).
    static func save(_ change: CallChange) -> PostgresPipeline.Statement {
        .init(change.before == nil ? insertCallSQL : updateCallSQL, parameters(of: change.after))
    }

    /// Whether `error` is that of a call ``save(_:)`` inserted whose session id is taken.
    static func isCallConflict(_ error: PostgresError) -> Bool {
        error.statement == insertCallSQL && error.sqlState == PostgresError.uniqueViolation
    }

    func call(sessionId: String) throws(StoreError) -> Call? {
        let rows = try reportingPostgresErrors { () throws(PostgresError) in
            try execute("SELECT \(Self.callColumns) FROM calls WHERE session_id = $1", [sessionId])
        }
        return rows.count == 0 ? nil : try Self.decodeCall(rows, 0)
    }

    /// The values of `call` as `$1…$23`, in ``callColumns``' order.
    static func parameters(of call: Call) -> [String?] {
        [
            call.sessionId, call.callType.rawValue, call.status.rawValue, call.initiator, call.receiver,
            call.initiatorDevice,
            String(call.initiatedAt), call.acceptedAt.map { String($0) }, call.endedAt.map { String($0) },
            call.acceptedBy,
            call.endedBy, call.endReason?.rawValue, String(call.timeoutMs), call.metadata?.serialized, String(call.seq),
            call.rejectReason, CallRowValues.ringingDevices(of: call), call.initiatorName, call.initiatorAvatarUrl,
            call.receiverName, call.receiverAvatarUrl, call.silent ? "true" : "false", call.clientCallId,
        ]
    }

    /// The ``Call`` in row `row` of a result selecting ``callColumns``.
    /// Fails on a value this build does not know.
    static func decodeCall(_ rows: PostgresRows, _ row: Int) throws(StoreError) -> Call {
        guard let sessionId = rows.string(row, 0), let initiator = rows.string(row, 3),
            let receiver = rows.string(row, 4),
            let initiatedAt = rows.int64(row, 6), let timeoutMs = rows.int64(row, 12)
        else {
            throw StoreError(.corruptRow, "a call row lacks its session id, parties or times")
        }
        return try CallRowValues(
            sessionId: sessionId, callType: rows.string(row, 1), status: rows.string(row, 2), initiator: initiator,
            receiver: receiver, initiatorDevice: rows.string(row, 5), initiatedAt: initiatedAt,
            acceptedAt: rows.int64(row, 7),
            endedAt: rows.int64(row, 8), acceptedBy: rows.string(row, 9), endedBy: rows.string(row, 10),
            endReason: rows.string(row, 11), timeoutMs: timeoutMs, metadata: rows.string(row, 13),
            seq: rows.int64(row, 14) ?? 0, rejectReason: rows.string(row, 15), ringingDevices: rows.string(row, 16),
            initiatorName: rows.string(row, 17), initiatorAvatarUrl: rows.string(row, 18),
            receiverName: rows.string(row, 19), receiverAvatarUrl: rows.string(row, 20),
            silent: rows.string(row, 21) == "t", clientCallId: rows.string(row, 22)
        ).decoded()
    }
}

extension StoreError {
    /// A ``StoreErrorCode/database`` error describing a PostgreSQL failure
    /// (``StoreErrorCode/retry`` for one that running again resolves).
    init(_ error: PostgresError) {
        let retry =
            error.sqlState.map {
                [PostgresError.deadlockDetected, PostgresError.serializationFailure, PostgresError.lockNotAvailable]
                    .contains($0)
            } ?? false
        self.init(retry ? .retry : .database, "POSTGRES " + error.description)
    }
}
