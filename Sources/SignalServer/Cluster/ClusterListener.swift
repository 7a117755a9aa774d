import Foundation
import SignalProtocol
import Synchronization

/// The thread that `LISTEN`s for this node: it hands what transactions
/// sent the node's devices to their loops, in commit order (PostgreSQL
/// delivers notifications in the order their transactions committed), and
/// paces the maintenance rounds: timers every ``timerRoundMillis``, the
/// lease every third of the lease time.
final class ClusterListener: Sendable {
    /// How often due timers are looked for: a ring timeout or grace period
    /// fires at most this late.
    static let timerRoundMillis: Int64 = 200

    private let url: String
    private let settings: ClusterSettings
    private let stopping = Atomic(false)
    private let done = DispatchSemaphore(value: 0)

    init(url: String, settings: ClusterSettings) {
        self.url = url
        self.settings = settings
    }

    func start(node: ClusterNode) {
        let thread = Thread { [self] in run(node) }
        thread.name = "ringd-cluster-listen"
        thread.start()
    }

    /// Stops the thread (within one wait) and waits for it.
    func stop() {
        stopping.store(true, ordering: .releasing)
        done.wait()
    }

    private func run(_ node: ClusterNode) {
        defer { done.signal() }
        var connection: PostgresConnection?
        var listening: Int64 = 0
        let leaseRound = Int64(settings.leaseSeconds * 1000 / 3)
        var nextLease: Int64 = 0, nextTimers: Int64 = 0
        while !stopping.load(ordering: .acquiring) {
            let now = node.service?.clock.monotonic() ?? 0
            if now >= nextTimers {
                node.maintain(leases: now >= nextLease)
                if now >= nextLease { nextLease = now + leaseRound }
                nextTimers = now + Self.timerRoundMillis
            }
            let number = node.number
            if connection == nil || listening != number {
                connection = listen(as: number, replacing: connection)
                listening = connection == nil ? 0 : number
                if connection == nil {
                    // Nothing heard in between: the wait is the retry pace.
                    Thread.sleep(forTimeInterval: Double(Self.timerRoundMillis) / 1000)
                    continue
                }
            }
            guard let open = connection else { continue }
            do throws(PostgresError) {
                for notification in try open.notifications(waitingMillis: Int32(max(1, nextTimers - now))) {
                    handle(notification, node: node, on: open)
                }
            } catch {
                connection = nil
                node.lose("its listening connection (\(error.message))")
            }
        }
    }

    /// A connection listening on `number`'s channel and on the one every
    /// node hears; nil when the database cannot be reached or the node has
    /// no number.
    private func listen(as number: Int64, replacing old: PostgresConnection?) -> PostgresConnection? {
        guard number != 0 else { return nil }
        do throws(PostgresError) {
            let connection = if let old { old } else { try PostgresConnection(url: url) }
            try connection.execute("UNLISTEN *")
            try connection.execute("LISTEN \(ClusterChannel.node(number))")
            try connection.execute("LISTEN \(ClusterChannel.all)")
            return connection
        } catch {
            Log.warning("cluster node cannot listen: \(error.description)")
            return nil
        }
    }

    private func handle(_ notification: PostgresNotification, node: ClusterNode, on connection: PostgresConnection) {
        guard let service = node.service else { return }
        if notification.channel == ClusterChannel.all {
            if let (uid, at) = ClusterBroadcast.revocation(from: notification.payload) { service.tokens.revoke(uid: uid, at: at) }
            return
        }
        var body = notification.payload
        if body.hasPrefix("@") {
            guard let stored = try? connection.takeMessage(String(body.dropFirst())) else {
                return Log.warning("a cluster message row \(body) is gone")
            }
            body = stored
        }
        guard let deliveries = NodeMessage.deliveries(from: body) else {
            return Log.warning("a cluster message this build cannot read was dropped")
        }
        service.deliver(deliveries)
    }
}

/// What a node tells every node: a revocation, as `{"revoke": uid, "at": ms}`.
enum ClusterBroadcast {
    static func revocation(uid: String, at: Int64) -> String {
        JSONValue.object([("revoke", .string(uid)), ("at", .integer(at))]).serialized
    }

    static func revocation(from payload: String) -> (String, Int64)? {
        guard let document = try? JSONValue.parse(payload), let uid = document["revoke"]?.stringValue,
              case .integer(let at)? = document["at"] else { return nil }
        return (uid, at)
    }
}
