import SignalProtocol

/// A ``RingClient``'s mutable state, behind its lock.
struct RingClientState {
    /// One open transport connection; `id` tells its events from a later one's.
    struct Link {
        let id: Int
        let connection: any RingTransportConnection
    }

    /// Who the client logged in as, and where it resumes from.
    struct Session {
        var credentials: Credentials
        var uid: String
        var deviceId: String
        /// The largest `seq` seen: a reconnect asks for what changed after it.
        var lastSeq: Int64
        /// The store epoch `lastSeq` is of (`auth`'s `epoch`), which a reconnect names with it.
        var epoch: String?
    }

    /// A request waiting for its result.
    struct Pending {
        var request: ClientRequest
        /// The link it went out on; nil while it waits for the next one.
        var link: Int?
        /// Whether a lost link sends it again on the next one: an initiate,
        /// which carries a `clientCallId` the server answers once.
        var resendable: Bool
        var continuation: CheckedContinuation<Result<ResultData, RingError>, Never>
        var timeout: Task<Void, Never>
    }

    var link: Link?
    /// Whether `auth` succeeded on ``link``.
    var authenticated = false
    var session: Session?
    /// ``RingClient/connect()``'s open, shared by callers that come
    /// meanwhile, numbered (``openings``) so that a dropped one does not clear a newer one.
    var opening: (number: Int, task: Task<Result<Void, RingError>, Never>)?
    var openings = 0
    /// The link being opened; cleared when it closes first or the client
    /// disconnects, so that it is not installed.
    var openingLink: Int?
    /// The reconnect loop, while the client reconnects.
    var reconnect: Task<Void, Never>?
    /// Why the client was last left disconnected other than by ``RingClient/disconnect()``.
    var disconnectReason: RingError?
    var nextLink = 0
    var nextRequest = 0
    var pending: [String: Pending] = [:]
    /// The state ``RingEvent/connection(_:)`` last announced.
    var announced = RingConnectionState.disconnected

    var connectionState: RingConnectionState {
        if reconnect != nil { return .reconnecting }
        if link != nil { return .connected(loggedIn: authenticated) }
        if opening != nil { return .connecting }
        return .disconnected
    }

    /// Notes that the device heard of `call` as it is at its `seq`.
    mutating func saw(_ call: Call) {
        guard let session else { return }
        self.session?.lastSeq = max(session.lastSeq, call.seq)
    }

    /// Fails and removes every pending request `matching`.
    mutating func fail(_ error: RingError, where matching: (Pending) -> Bool) {
        for (id, request) in pending where matching(request) {
            pending[id] = nil
            request.timeout.cancel()
            request.continuation.resume(returning: .failure(error))
        }
    }
}
