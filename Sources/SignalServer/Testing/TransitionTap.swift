import SignalProtocol
import SignalReactor
import Synchronization

/// Every transition of the state machine, numbered in commit order: kept
/// (the latest ``capacity``) for `GET /v1/test/transitions` and streamed to
/// the `GET /v1/test/tap` WebSockets. Records are published on the store's
/// thread once their changes are committed, before any device hears of
/// them.
final class TransitionTap: Sendable {
    /// Records kept for queries and replays; older ones are dropped. A
    /// record is 1 to 3 KB, so a whole replay stays well under the
    /// connection's outbound hard limit (`limits.outboundHardLimitBytes`).
    static let capacity = 1_000

    /// A published record.
    struct Entry: Sendable {
        let seq: Int64
        let sessionIds: [String]
        let uids: [String]
        let json: JSONValue
        /// The JSON text, encoded once for every subscriber.
        let encoded: [UInt8]
    }

    private struct Subscriber: Sendable {
        let mailbox: LoopMailbox
        let session: LoopBound<TapSession>
    }

    private struct State {
        var entries: [Entry] = []
        /// Index in `entries` of the oldest record once it is full (a ring).
        var start = 0
        var lastSeq: Int64 = 0
        var subscribers: [UInt64: Subscriber] = [:]
        var lastSubscriber: UInt64 = 0

        /// The records kept, oldest first.
        var ordered: ArraySlice<Entry> { ArraySlice(entries[start...] + entries[..<start]) }
    }

    private let state = Mutex(State())

    /// The number of the latest record published.
    var lastSeq: Int64 { state.withLock { $0.lastSeq } }

    /// Numbers `record`, keeps it and sends it to every subscriber.
    func publish(_ record: TransitionRecord, committed: Bool) {
        let (entry, subscribers) = state.withLock { state in
            state.lastSeq += 1
            let json = record.json(seq: state.lastSeq, committed: committed)
            var encoded: [UInt8] = []
            json.write(into: &encoded)
            let entry = Entry(
                seq: state.lastSeq, sessionIds: record.sessionIds, uids: record.uids, json: json,
                encoded: encoded)
            if state.entries.count < Self.capacity {
                state.entries.append(entry)
            } else {
                state.entries[state.start] = entry
                state.start = (state.start + 1) % Self.capacity
            }
            return (entry, Array(state.subscribers.values))
        }
        for subscriber in subscribers {
            let session = subscriber.session
            subscriber.mailbox.submit { loop in session.value(on: loop)?.send(entry.encoded) }
        }
    }

    /// The kept records after `afterSeq` that touch `sessionId` and `uid`
    /// (each when given), oldest first, at most `limit`; and where the next
    /// page starts: the last record looked at (so the next page neither
    /// skips a record nor repeats one).
    func entries(sessionId: String?, uid: String?, afterSeq: Int64, limit: Int) -> (entries: [Entry], next: Int64) {
        state.withLock { state in
            var found: [Entry] = []
            var next = afterSeq
            for entry in state.ordered where entry.seq > afterSeq {
                guard found.count < limit else { break }
                next = entry.seq
                if (sessionId.map(entry.sessionIds.contains) ?? true) && (uid.map(entry.uids.contains) ?? true) {
                    found.append(entry)
                }
            }
            return (found, next)
        }
    }

    /// Adds a subscriber, which first gets the kept records after `afterSeq`,
    /// then every record published later, without a gap.
    func subscribe(_ session: TapSession, on loop: EventLoop, replayingAfter afterSeq: Int64) -> UInt64 {
        let (id, replay) = state.withLock { state in
            state.lastSubscriber += 1
            state.subscribers[state.lastSubscriber] = Subscriber(
                mailbox: loop.mailbox,
                session: LoopBound(session, on: loop))
            let replay = state.ordered.filter { $0.seq > afterSeq }
            return (state.lastSubscriber, replay)
        }
        // On the subscriber's loop, ahead of anything published after the lock.
        for entry in replay { session.send(entry.encoded) }
        return id
    }

    func unsubscribe(_ id: UInt64) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    /// Forgets the kept records (a reset); numbering goes on.
    func clear() {
        state.withLock { state in
            state.entries = []
            state.start = 0
        }
    }

}

/// One `GET /v1/test/tap` WebSocket: receives every transition record as a
/// text message; what it sends is ignored.
final class TapSession: WebSocketResponder {
    private let tap: TransitionTap
    private let replayAfter: Int64
    private var socket: WebSocket?
    private var subscription: UInt64?

    /// Made for the upgrade request, before its 101 is sent. With no
    /// `replayAfter`, the records published since are replayed: the client
    /// may act as soon as it has the 101, before the socket opens here.
    init(tap: TransitionTap, replayAfter: Int64?) {
        self.tap = tap
        self.replayAfter = replayAfter ?? tap.lastSeq
    }

    func webSocketDidOpen(_ socket: WebSocket) {
        self.socket = socket
        // The test key was checked: it no longer counts as waiting to authenticate.
        socket.markAuthenticated()
        subscription = tap.subscribe(self, on: socket.loop, replayingAfter: replayAfter)
    }

    func webSocket(_ socket: WebSocket, didReceive message: WebSocketMessage) {}

    func webSocketDidClose(_ socket: WebSocket, code: WebSocketCloseCode) {
        if let subscription { tap.unsubscribe(subscription) }
        subscription = nil
        self.socket = nil
    }

    func send(_ encoded: [UInt8]) {
        socket?.send(WebSocketMessage(kind: .text, payload: encoded))
    }
}
