import Foundation
import SignalProtocol
import Synchronization

/// The thread that `LISTEN`s for this node: it hands what transactions
/// sent the node's devices to their loops, in commit order (PostgreSQL
/// delivers notifications in the order their transactions committed),
/// tries for the webhook leadership every third of the lease time, and
/// paces the worker's maintenance rounds: timers every
/// ``timerRoundMillis``, lapsed nodes every third of the lease time.
final class ClusterListener: Sendable {
    /// How often due timers are looked for: a ring timeout or grace period
    /// fires at most this late.
    static let timerRoundMillis: Int64 = 200

    private let url: String
    private let settings: ClusterSettings
    private let stopping = Atomic(false)
    private let done = DispatchSemaphore(value: 0)
    /// Signalled once, when the node first registered and listens.
    private let attached = DispatchSemaphore(value: 0)
    private let announced = Atomic(false)

    init(url: String, settings: ClusterSettings) {
        self.url = url
        self.settings = settings
    }

    /// Starts the thread and waits until the node is registered and
    /// listening (false when that did not happen within `timeout` seconds).
    func start(node: ClusterNode, timeout: Double) -> Bool {
        let thread = Thread { [self] in run(node) }
        thread.name = "ringd-cluster-listen"
        thread.start()
        return attached.wait(timeout: .now() + timeout) == .success
    }

    /// Stops the thread (within one wait) and waits for it at most
    /// `seconds`: it may be in a statement to a database that went silent,
    /// and then ends with the process.
    func stop(waitingAtMost seconds: Double) {
        stopping.store(true, ordering: .releasing)
        _ = done.wait(timeout: .now() + seconds)
    }

    private func run(_ node: ClusterNode) {
        defer {
            // The connection, and the webhook leader's lock with it, goes with the thread.
            node.webhooks?.resign()
            done.signal()
        }
        var connection: PostgresConnection?
        var listening: Int64 = 0
        let leaseMillis = Int64(settings.leaseSeconds * 1000)
        var nextRound: Int64 = 0, nextTimers: Int64 = 0, nextReap: Int64 = 0
        while !stopping.load(ordering: .acquiring) {
            let now = node.service?.clock.monotonic() ?? 0
            if connection == nil || listening != node.number {
                (connection, listening) = attach(node, on: connection)
                guard connection != nil else {
                    node.webhooks?.resign()
                    // Nothing heard in between: the wait is the retry pace.
                    Thread.sleep(forTimeInterval: Double(Self.timerRoundMillis) / 1000)
                    continue
                }
            }
            guard let open = connection else { continue }
            do throws(PostgresError) {
                if now >= nextRound {
                    // The lease is renewed elsewhere (ClusterLease); the webhook leadership goes at its pace.
                    nextRound = now + leaseMillis / 3
                    try node.webhooks?.round(on: open)
                }
                if now >= nextTimers {
                    node.maintain(leases: now >= nextReap)
                    if now >= nextReap { nextReap = now + leaseMillis / 3 }
                    nextTimers = now + Self.timerRoundMillis
                }
                for notification in try open.notifications(
                    waitingMillis: Int32(max(1, min(nextTimers, nextRound) - now)))
                {
                    try handle(notification, node: node, on: open)
                }
            } catch {
                connection = nil
                node.webhooks?.resign()
                node.lose("its listening connection (\(error.message))")
            }
        }
    }

    /// Registers the node under a new number and listens on that number's
    /// channel before the number is published: from then on the node takes
    /// devices, and nothing sent to them can come before it listens.
    /// Always a new number: a node that had to attach again may have
    /// missed notifications, and other nodes take the old number's devices away.
    private func attach(_ node: ClusterNode, on old: PostgresConnection?) -> (PostgresConnection?, Int64) {
        do throws(PostgresError) {
            let connection =
                if let old { old } else {
                    try PostgresConnection.clusterSession(url: url, leaseSeconds: settings.leaseSeconds)
                }
            try connection.execute("UNLISTEN *")
            try connection.execute("LISTEN \(ClusterChannel.all)")
            if let webhooks = node.webhooks, webhooks.isLeading { try webhooks.listen(on: connection) }
            // Read after listening, so no revocation or token falls between
            // the two; a failed read fails the attach, which starts over.
            if let tokens = node.service?.tokens {
                for (uid, at) in try Self.reading("revocations", connection.revocations) {
                    tokens.revoke(uid: uid, at: at)
                }
            }
            if let registry = node.service?.pushTokens {
                registry.replace(
                    tokensOf: nil,
                    with: try Self.reading("push tokens") { () throws(StoreError) in
                        try connection.pushTokens()
                    })
            }
            let number = try connection.registerNode(name: node.name)
            try connection.execute("LISTEN \(ClusterChannel.node(number))")
            node.registered(as: number)
            if !announced.exchange(true, ordering: .acquiringAndReleasing) { attached.signal() }
            return (connection, number)
        } catch {
            Log.warning("cluster node cannot register and listen: \(error.description)")
            return (nil, 0)
        }
    }

    /// What `read` answers; its failure as the attach's error.
    private static func reading<Value>(
        _ what: String, _ read: () throws(StoreError) -> Value
    ) throws(PostgresError) -> Value {
        do {
            return try read()
        } catch {
            throw PostgresError(sqlState: nil, message: "the \(what) cannot be read: \(error.message)")
        }
    }

    /// Hands `notification` on. A message or tokens it names that cannot
    /// be read fail the connection, as its loss would: the node then
    /// registers again and its clients resume from the database, rather
    /// than miss what the notification carried.
    private func handle(
        _ notification: PostgresNotification, node: ClusterNode, on connection: PostgresConnection
    ) throws(PostgresError) {
        guard let service = node.service else { return }
        if notification.channel == PostgresConnection.webhookChannel {
            node.webhooks?.claim()
            return
        }
        if notification.channel == ClusterChannel.all {
            guard let document = try? JSONValue.parse(notification.payload) else { return }
            if let (uid, at) = ClusterBroadcast.revocation(from: document) {
                service.tokens.revoke(uid: uid, at: at)
            } else {
                try ClusterBroadcast.handlePush(document, for: service, of: node, on: connection)
            }
            return
        }
        var body = notification.payload
        if body.hasPrefix("@") {
            guard let stored = try connection.takeMessage(String(body.dropFirst())) else {
                throw PostgresError(sqlState: nil, message: "the cluster message row \(body) is gone")
            }
            body = stored
        }
        guard let deliveries = NodeMessage.deliveries(from: body) else {
            return Log.warning("a cluster message this build cannot read was dropped")
        }
        service.deliver(deliveries)
    }
}

/// What a node tells every node: a revocation, as `{"revoke": uid, "at": ms}`;
/// push, in ClusterBroadcast+Push.swift.
enum ClusterBroadcast {
    /// Sends `payload` to every node when the transaction `db` is in commits (at once outside one).
    static func send(_ payload: String, on db: PostgresConnection) throws(PostgresError) {
        try db.execute(statement(payload))
    }

    /// What ``send(_:on:)`` runs, for a pipeline.
    static func statement(_ payload: String) -> PostgresPipeline.Statement {
        .init("SELECT pg_notify($1, $2)", [ClusterChannel.all, payload])
    }

    static func revocation(uid: String, at: Int64) -> String {
        JSONValue.object([("revoke", .string(uid)), ("at", .integer(at))]).serialized
    }

    static func revocation(from document: JSONValue) -> (String, Int64)? {
        guard let uid = document["revoke"]?.stringValue, case .integer(let at)? = document["at"] else { return nil }
        return (uid, at)
    }
}
