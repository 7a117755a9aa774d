import SignalProtocol

/// The webhook outbox in PostgreSQL's `webhook_deliveries`, as
/// ``StoreConnection`` keeps it in SQLite, plus the claims of the webhook
/// leader (docs/CLUSTER.md, "Webhooks"): `claimed` is the term of the leader
/// holding the row in memory.
extension PostgresConnection {
    private static let columns =
        "endpoint, seq, event_id, session_id, trigger, created_at, body, status, attempts, "
        + "next_attempt_at, last_status, last_error, updated_at"

    /// The channel a transaction that wrote deliveries notifies; the leader listens on it.
    static let webhookChannel = "ringd_webhooks"

    /// Adds pending deliveries and notifies the leader, in one statement.
    func insert(_ deliveries: [WebhookDelivery]) throws(PostgresError) {
        if let statement = Self.insert(deliveries) { try execute(statement) }
    }

    /// The statement that adds pending deliveries (in the transaction of
    /// the changes they tell of) and notifies the leader: one whatever
    /// their number; nil for none.
    static func insert(_ deliveries: [WebhookDelivery]) -> PostgresPipeline.Statement? {
        guard !deliveries.isEmpty else { return nil }
        var values: [String] = []
        var parameters: [String?] = []
        for delivery in deliveries {
            let base = parameters.count
            values.append("(" + (1 ... 13).map { "$\(base + $0)" }.joined(separator: ", ") + ")")
            parameters += Self.fields(delivery)
        }
        return .init(
            """
            WITH added AS (INSERT INTO webhook_deliveries (\(Self.columns)) VALUES \(values.joined(separator: ", ")))
            SELECT pg_notify('\(Self.webhookChannel)', '')
            """, parameters)
    }

    /// The 13 fields of `delivery` in the order of ``columns``.
    private static func fields(_ delivery: WebhookDelivery) -> [String?] {
        [
            delivery.endpoint, String(delivery.seq), delivery.eventId, delivery.sessionId, delivery.trigger,
            String(delivery.createdAt), String(decoding: delivery.body, as: UTF8.self), delivery.status.rawValue,
            String(delivery.attempts), String(delivery.nextAttemptAt), delivery.lastStatus.map(String.init),
            delivery.lastError, String(delivery.updatedAt),
        ]
    }

    /// Claims for `term` at most `limit` pending deliveries it does not
    /// hold yet (new ones, retried ones, those of an earlier term), oldest
    /// change first. Rows of one call commit in their seq order (under its
    /// parties' locks), so a later change of a call is never claimed before
    /// an earlier one that is still pending.
    func claimWebhookDeliveries(term: Int64, limit: Int) throws(StoreError) -> [WebhookDelivery] {
        let rows = try reportingPostgresErrors { () throws(PostgresError) in
            try execute(
                """
                UPDATE webhook_deliveries SET claimed = $1 WHERE (endpoint, seq) IN (
                    SELECT endpoint, seq FROM webhook_deliveries
                    WHERE status = 'pending' AND claimed IS DISTINCT FROM $1 ORDER BY seq LIMIT $2)
                RETURNING \(Self.columns)
                """, [String(term), String(limit)])
        }
        return try Self.deliveries(rows).sorted { ($0.seq, $0.endpoint) < ($1.seq, $1.endpoint) }
    }

    /// Records how `delivery` stands after an attempt, if `term` still holds
    /// it (a row a later leader claimed is that leader's); whether it did.
    @discardableResult
    func saveWebhookAttempt(_ delivery: WebhookDelivery, term: Int64) throws(StoreError) -> Bool {
        try reportingPostgresErrors { () throws(PostgresError) in
            try execute(
                """
                UPDATE webhook_deliveries SET status = $3, attempts = $4, next_attempt_at = $5, last_status = $6,
                                              last_error = $7, updated_at = $8
                WHERE endpoint = $1 AND seq = $2 AND claimed = $9
                """,
                [
                    delivery.endpoint, String(delivery.seq), delivery.status.rawValue, String(delivery.attempts),
                    String(delivery.nextAttemptAt), delivery.lastStatus.map(String.init), delivery.lastError,
                    String(delivery.updatedAt), String(term),
                ]
            ).affected == 1
        }
    }

    /// One page of deliveries, newest change first, with the SQLite store's cursor.
    func webhookDeliveries(
        _ query: WebhookDeliveryQuery
    ) throws(StoreError) -> (deliveries: [WebhookDelivery], next: String?) {
        var parameters: [String?] = [String(query.limit + 1)]
        var conditions: [String] = []
        if let status = query.status {
            parameters.append(status.rawValue)
            conditions.append("status = $\(parameters.count)")
        }
        if let cursor = query.cursor {
            let after = try WebhookDeliveryQuery.position(of: cursor)
            parameters += [String(after.seq), after.endpoint]
            let (seq, endpoint) = ("$\(parameters.count - 1)", "$\(parameters.count)")
            conditions.append("(seq < \(seq) OR (seq = \(seq) AND endpoint COLLATE \"C\" < \(endpoint)))")
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        // COLLATE "C": the cursor compares endpoints bytewise, as SQLite does.
        let rows = try reportingPostgresErrors { () throws(PostgresError) in
            try execute(
                "SELECT \(Self.columns) FROM webhook_deliveries\(filter) "
                    + "ORDER BY seq DESC, endpoint COLLATE \"C\" DESC LIMIT $1", parameters)
        }
        var deliveries = try Self.deliveries(rows)
        guard deliveries.count > query.limit else { return (deliveries, nil) }
        deliveries.removeLast()
        return (deliveries, deliveries.last.map(WebhookDeliveryQuery.cursor(after:)))
    }

    /// Sets the failed delivery of `seq` to `endpoint` (or, with nil, every
    /// failed one) pending again, due at `now`, attempts counted afresh and
    /// claimed by no one, and tells the leader; returns them as they now stand.
    func retryWebhookDeliveries(endpoint: String?, seq: Int64?, now: Int64) throws(StoreError) -> [WebhookDelivery] {
        var parameters: [String?] = [String(now)]
        var filter = ""
        if let endpoint, let seq {
            parameters += [endpoint, String(seq)]
            filter = " AND endpoint = $2 AND seq = $3"
        }
        let rows = try reportingPostgresErrors { () throws(PostgresError) in
            try transaction { () throws(PostgresError) in
                let rows = try execute(
                    """
                    UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $1, updated_at = $1,
                                                  claimed = NULL
                    WHERE status = 'failed'\(filter) RETURNING \(Self.columns)
                    """, parameters)
                if rows.count > 0 { try execute("SELECT pg_notify('\(Self.webhookChannel)', '')") }
                return rows
            }
        }
        return try Self.deliveries(rows).sorted { $0.seq < $1.seq }
    }

    /// Deletes at most `limit` delivered or failed rows last touched before
    /// `cutoff` (ms); returns how many.
    func pruneWebhookDeliveries(before cutoff: Int64, limit: Int) throws(StoreError) -> Int {
        try reportingPostgresErrors { () throws(PostgresError) in
            try execute(
                """
                DELETE FROM webhook_deliveries WHERE (endpoint, seq) IN (
                    SELECT endpoint, seq FROM webhook_deliveries WHERE status != 'pending' AND updated_at < $1 LIMIT $2)
                """, [String(cutoff), String(limit)]
            ).affected
        }
    }

    /// How many deliveries are pending, and the oldest one's creation time.
    func pendingWebhookDepth() throws(StoreError) -> (Int, Int64?) {
        let rows = try reportingPostgresErrors { () throws(PostgresError) in
            try execute("SELECT count(*), min(created_at) FROM webhook_deliveries WHERE status = 'pending'")
        }
        return (Int(rows.int64(0, 0) ?? 0), rows.int64(0, 1))
    }

    private static func deliveries(_ rows: PostgresRows) throws(StoreError) -> [WebhookDelivery] {
        var deliveries: [WebhookDelivery] = []
        for row in 0 ..< rows.count {
            guard let endpoint = rows.string(row, 0), let seq = rows.int64(row, 1), let eventId = rows.string(row, 2),
                let sessionId = rows.string(row, 3), let trigger = rows.string(row, 4),
                let createdAt = rows.int64(row, 5), let body = rows.string(row, 6),
                let status = rows.string(row, 7).flatMap(WebhookDeliveryStatus.init(rawValue:)),
                let attempts = rows.int64(row, 8), let nextAttemptAt = rows.int64(row, 9),
                let updatedAt = rows.int64(row, 12)
            else {
                throw StoreError(.corruptRow, "a webhook delivery row lacks a field or has an unknown status")
            }
            deliveries.append(
                WebhookDelivery(
                    endpoint: endpoint, seq: seq, eventId: eventId, sessionId: sessionId,
                    trigger: trigger, createdAt: createdAt, body: Array(body.utf8),
                    status: status, attempts: Int(attempts), nextAttemptAt: nextAttemptAt,
                    lastStatus: rows.int64(row, 10).map { Int($0) },
                    lastError: rows.string(row, 11), updatedAt: updatedAt))
        }
        return deliveries
    }
}
