import SignalCore
import SignalProtocol

extension ClusterTransaction {
    /// How a transaction starts: the time and settings it decides with,
    /// and its first round trip (step 1), computed together when that
    /// round trip is about to be sent, on its own or after the previous
    /// transaction's `COMMIT` (``ClusterLookahead``).
    struct Start {
        let now: SignalingTime
        let settings: SignalingSettings
        let node: Int64
        let request: PostgresTransitionRead.Request
        /// `BEGIN`, the read, and what goes with it.
        let reads: PostgresPipeline
        let at: ReadResults
    }

    /// Where the results of a read pipeline are, counted from its `BEGIN`.
    struct ReadResults {
        var read = 0
        /// A timer's take: no row taken, another node fired it.
        var timer: Int?
        /// A connect's hold on this node's row.
        var alive: Int?
        /// The store's epoch, read with a session's first connect.
        var epoch: Int?
    }

    /// A transaction's start whose read already ran, and its results: the
    /// transaction is open on the connection, its users' locks held.
    struct Prefetched {
        let start: Start
        let results: [PostgresRows]
    }

    /// The start of this transaction on `db`, at `now`, with `settings`;
    /// devices of a node whose lease of `leaseMillis` lapsed are not
    /// connected for it (``PostgresTransitionRead/devices``).
    func start(
        on db: PostgresConnection, settings: SignalingSettings, now: SignalingTime, node: Int64, leaseMillis: Int64
    ) -> Start {
        let request = readRequest(settings: settings, now: now, leaseMillis: leaseMillis)
        let (reads, at) = readPipeline(request, node: node, on: db)
        return Start(now: now, settings: settings, node: node, request: request, reads: reads, at: at)
    }

    /// Step 1's statements for `request`: `BEGIN`, the call of
    /// `ringd_transition`, and a due timer's take, a connect's hold on
    /// this node's row (a device arriving needs it alive until the
    /// commit), and the store's epoch once per session (with the first
    /// connect's read rather than in a round trip of its own).
    func readPipeline(
        _ request: PostgresTransitionRead.Request, node: Int64, on db: PostgresConnection
    ) -> (PostgresPipeline, ReadResults) {
        var reads = PostgresPipeline()
        var at = ReadResults()
        reads.append("BEGIN")
        at.read = reads.append(PostgresTransitionRead.statement(request))
        if case .timer(let timer) = description { at.timer = reads.append(PostgresConnection.takeTimer(timer)) }
        if case .connect = description {
            at.alive = reads.append(PostgresConnection.holdAlive(node: node))
            if db.knownEpoch == nil { at.epoch = reads.append(PostgresConnection.storeEpochQuery) }
        }
        return (reads, at)
    }

    /// What the read of step 1 asks for this input.
    private func readRequest(
        settings: SignalingSettings, now: SignalingTime, leaseMillis: Int64
    ) -> PostgresTransitionRead.Request {
        var request = PostgresTransitionRead.Request(
            users: [], leaseMillis: leaseMillis, keptNode: disconnectedNode, readsUsers: readsUsers, now: now.wall)
        switch description {
        case .request(let named, _, let device):
            request.users = [device.uid]
            if case .initiateCall(let receiver, _, _, _, let clientCallId) = named {
                request.users.insert(receiver)
                // What the caller's recent calls on every node say (a
                // retry's call, the per-user limit), read under its lock.
                if clientCallId != nil || settings.initiatesPerMinute > 0 {
                    request.initiator = device.uid
                    request.clientCallId = clientCallId
                    request.initiateLimit = settings.initiatesPerMinute
                }
            } else {
                request.sessionId = CallStateMachine.sessionId(of: named)
            }
        case .connect(let device, _, _), .disconnect(let device):
            request.users = [device.uid]
        case .timer(.ring(let sessionId)), .unreachable(let sessionId):
            request.sessionId = sessionId
        case .timer(.grace(let uid, _)):
            request.users = [uid]
        case .rebuild, .restart, .shutdown:
            break
        }
        return request
    }

    /// The node of the device a disconnect takes away, whose presence the
    /// transaction reads even when its lease lapsed (a dead node's devices
    /// leave through disconnects).
    private var disconnectedNode: Int64? {
        if case .disconnect(let device) = description { device.address.node } else { nil }
    }

    /// Whether the machine reads users' records for the input: a call
    /// placed (profiles, do-not-disturb) and a device arriving (its user's
    /// do-not-disturb); other inputs skip the query.
    private var readsUsers: Bool {
        switch description {
        case .request(.initiateCall, _, _), .connect: true
        default: false
        }
    }

}

/// The next transaction queued on a worker, as the running one sees it
/// (``ClusterWorker``): the running one sends its read after its own
/// `COMMIT`, in the same round trip, so under load a transition costs
/// about one round trip rather than two. Made and used on the worker's
/// thread, for one transaction.
///
/// The read is computed when it is sent, so the next transaction's `now`
/// is taken then, after the running one's: its input arrived before, and
/// it decides a round trip later at most, as a read of its own would
/// have made it. The read runs after the `COMMIT`, so it sees what the
/// running transaction committed and no lock is held across the two.
final class ClusterLookahead {
    private let starting: (PostgresConnection) -> ClusterTransaction.Start?
    /// The next transaction's start with its read's results, once they
    /// came with the running one's commit; nil while they did not (it
    /// reads by itself then).
    private(set) var prefetched: ClusterTransaction.Prefetched?

    /// `starting` computes the next transaction's start, nil when it will
    /// run no transaction.
    init(_ starting: @escaping (PostgresConnection) -> ClusterTransaction.Start?) {
        self.starting = starting
    }

    /// The next transaction's start, to send its read now.
    func start(on db: PostgresConnection) -> ClusterTransaction.Start? { starting(db) }

    /// Keeps what the read of `start` returned.
    func received(_ start: ClusterTransaction.Start, results: [PostgresRows]) {
        prefetched = ClusterTransaction.Prefetched(start: start, results: results)
    }
}
