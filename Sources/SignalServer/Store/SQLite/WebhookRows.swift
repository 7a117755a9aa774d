import SignalProtocol

/// Where one event stands for one endpoint.
public enum WebhookDeliveryStatus: String, Sendable {
    /// Not delivered yet: waiting for its turn or its next attempt.
    case pending
    /// A 2xx answer came back.
    case delivered
    /// Every attempt failed; kept until retried by hand or pruned.
    case failed
}

/// One event for one endpoint, as the outbox keeps it.
public struct WebhookDelivery: Sendable, Hashable {
    /// The endpoint's URL (endpoints are told apart by it).
    public var endpoint: String
    /// The position of the call change the event tells of.
    public var seq: Int64
    public var eventId: String
    public var sessionId: String
    public var trigger: String
    /// When the change happened, ms since the Unix epoch.
    public var createdAt: Int64
    /// The request body, the same bytes on every attempt.
    public var body: [UInt8]
    public var status: WebhookDeliveryStatus
    public var attempts: Int
    /// When the next attempt is due, ms since the Unix epoch.
    public var nextAttemptAt: Int64
    /// The HTTP status of the last attempt, if it got an answer.
    public var lastStatus: Int?
    /// Why the last attempt failed, if it did.
    public var lastError: String?
    public var updatedAt: Int64
}

/// The webhook outbox in `webhook_deliveries`.
extension StoreConnection {
    private static let columns =
        "endpoint, seq, event_id, session_id, trigger, created_at, body, status, attempts, "
        + "next_attempt_at, last_status, last_error, updated_at"

    private static let insertSQL =
        "INSERT INTO webhook_deliveries (\(columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"

    /// Binds every field as ``insertSQL`` does and uses those an attempt changes.
    private static let updateSQL = """
        UPDATE webhook_deliveries SET status = ?8, attempts = ?9, next_attempt_at = ?10, last_status = ?11,
                                      last_error = ?12, updated_at = ?13
        WHERE endpoint = ?1 AND seq = ?2
        """

    private static let pendingSQL = """
        SELECT \(columns) FROM webhook_deliveries INDEXED BY webhook_deliveries_by_status
        WHERE status = 'pending' AND seq >= ?1 ORDER BY seq LIMIT ?2
        """

    /// Adds a pending delivery (in the transaction of the change it tells of).
    func insert(_ delivery: WebhookDelivery) throws(StoreError) {
        try run(Self.insertSQL, with: delivery)
    }

    /// Records how `delivery` stands after an attempt (or a retry by hand).
    func update(_ delivery: WebhookDelivery) throws(StoreError) {
        try run(Self.updateSQL, with: delivery)
    }

    /// Runs `sql` with the 13 fields of `delivery` bound as ?1 through ?13,
    /// in the order of ``columns``.
    private func run(_ sql: String, with delivery: WebhookDelivery) throws(StoreError) {
        // The body is stored as text (the column is TEXT), as it was always written.
        try database.execute(
            sql, delivery.endpoint, delivery.seq, delivery.eventId, delivery.sessionId, delivery.trigger,
            delivery.createdAt, String(decoding: delivery.body, as: UTF8.self), delivery.status.rawValue,
            delivery.attempts, delivery.nextAttemptAt, delivery.lastStatus, delivery.lastError, delivery.updatedAt)
    }

    /// Pending deliveries of changes from position `seq` on, oldest first, at most `limit`.
    func pendingWebhookDeliveries(from seq: Int64, limit: Int) throws(StoreError) -> [WebhookDelivery] {
        try database.fetchAll(Self.pendingSQL, seq, limit, decode: Self.decodeDelivery)
    }

    private static func decodeDelivery(_ row: SQLiteRow) throws(StoreError) -> WebhookDelivery {
        guard let endpoint = row.optionalString(0), let eventId = row.optionalString(2),
            let sessionId = row.optionalString(3), let trigger = row.optionalString(4),
            let body = row.optionalString(6),
            let status = row.optionalString(7).flatMap(WebhookDeliveryStatus.init(rawValue:))
        else {
            throw StoreError(.corruptRow, "a webhook delivery row lacks a field or has an unknown status")
        }
        return WebhookDelivery(
            endpoint: endpoint, seq: row.int64(1), eventId: eventId, sessionId: sessionId,
            trigger: trigger, createdAt: row.int64(5), body: Array(body.utf8), status: status,
            attempts: Int(truncatingIfNeeded: row.int64(8)), nextAttemptAt: row.int64(9),
            lastStatus: row.optionalInt64(10).map { Int(truncatingIfNeeded: $0) },
            lastError: row.optionalString(11), updatedAt: row.int64(12))
    }
}

/// Which deliveries a listing shows.
public struct WebhookDeliveryQuery: Sendable {
    public var status: WebhookDeliveryStatus?
    /// Page size, 1–100.
    public var limit = 30
    /// Where the previous page ended (opaque, from `next`).
    public var cursor: String?

    public init(status: WebhookDeliveryStatus? = nil, limit: Int = 30, cursor: String? = nil) {
        self.status = status
        self.limit = limit
        self.cursor = cursor
    }
}

extension WebhookDeliveryQuery {
    /// The cursor of the page that follows `last`: its position and endpoint.
    static func cursor(after last: WebhookDelivery) -> String {
        Base64.encodeURL(Array("\(last.seq)|\(last.endpoint)".utf8))
    }

    /// Where the page before `cursor` ended.
    static func position(of cursor: String) throws(StoreError) -> (seq: Int64, endpoint: String) {
        guard let bytes = Base64.decodeURL(cursor), let text = String(validating: bytes, as: UTF8.self),
            let bar = text.firstIndex(of: "|"), let seq = Int64(text[..<bar]), seq > 0
        else {
            throw StoreError(.badCursor, "cursor is not one the server issued")
        }
        return (seq, String(text[text.index(after: bar)...]))
    }
}

/// Listing, retrying and pruning the outbox (the REST API's side).
extension StoreConnection {
    /// One page of deliveries, newest change first. The cursor is the last
    /// row's position and endpoint, so rows added meanwhile neither repeat
    /// nor are skipped.
    func webhookDeliveries(
        _ query: WebhookDeliveryQuery
    ) throws(StoreError) -> (deliveries: [WebhookDelivery], next: String?) {
        let after = try query.cursor.map { cursor throws(StoreError) in try WebhookDeliveryQuery.position(of: cursor) }
        var sql = "SELECT \(Self.columns) FROM webhook_deliveries"
        var conditions: [String] = []
        if query.status != nil { conditions.append("status = ?1") }
        if after != nil { conditions.append("(seq < ?2 OR (seq = ?2 AND endpoint < ?3))") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY seq DESC, endpoint DESC LIMIT ?4"
        // ?1 to ?3 are bound NULL where the text does not use them.
        var deliveries = try database.fetchAll(
            sql, query.status?.rawValue, after?.seq, after?.endpoint, query.limit + 1, decode: Self.decodeDelivery)
        guard deliveries.count > query.limit else { return (deliveries, nil) }
        deliveries.removeLast()
        return (deliveries, WebhookDeliveryQuery.cursor(after: deliveries[deliveries.count - 1]))
    }

    /// The delivery of the change at `seq` to `endpoint`, if any.
    func webhookDelivery(endpoint: String, seq: Int64) throws(StoreError) -> WebhookDelivery? {
        try database.fetchOne(
            "SELECT \(Self.columns) FROM webhook_deliveries WHERE endpoint = ?1 AND seq = ?2", endpoint, seq,
            decode: Self.decodeDelivery)
    }

    /// Every failed delivery, oldest change first.
    func failedWebhookDeliveries() throws(StoreError) -> [WebhookDelivery] {
        try database.fetchAll(
            "SELECT \(Self.columns) FROM webhook_deliveries WHERE status = 'failed' ORDER BY seq",
            decode: Self.decodeDelivery)
    }

    /// Deletes at most `limit` delivered or failed rows last touched before
    /// `cutoff` (ms); returns how many. Bounded, so that a long backlog is
    /// pruned in short jobs between commits.
    func pruneWebhookDeliveries(before cutoff: Int64, limit: Int) throws(StoreError) -> Int {
        try database.execute(
            """
            DELETE FROM webhook_deliveries WHERE (endpoint, seq) IN (
                SELECT endpoint, seq FROM webhook_deliveries INDEXED BY webhook_deliveries_settled
                WHERE status != 'pending' AND updated_at < ?1 LIMIT ?2)
            """, cutoff, limit)
    }
}
