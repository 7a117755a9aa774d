import SignalSystem

/// With `--reconnect`: opens the connection of a party that dropped, or
/// whose connect failed, again (at once, then after 50 ms, doubling up to
/// 800 ms) until it is authenticated, for at most ``window`` from when it
/// was lost; then the party is given up. Connects happen in ``tick(now:)``,
/// from the run's loop, never from a ``ClientLoop`` callback.
///
/// The first attempt does not wait so that it falls in a restart's gap:
/// a server that binds its own port refuses it, a held socket queues it,
/// and `refusedConnects` tells the two apart.
final class Reconnector {
    /// The wait after the first failed attempt.
    static let firstDelay: UInt64 = 50_000_000
    static let maxDelay: UInt64 = 800_000_000
    /// How long a lost party may take to be authenticated again.
    static let window: UInt64 = 10_000_000_000

    private struct Lost {
        /// The window counts from the first loss, not from each failed attempt.
        let since: UInt64
        var delay: UInt64
        /// nil while a connection is in progress: only the window bounds it.
        var due: UInt64?
    }

    private let loop: ClientLoop
    /// Where callers and callees connect (two nodes with `--callee-server`).
    private let addresses: (callers: SocketAddress, callees: SocketAddress)
    /// By peer index (the party's slot in the loop).
    private var lost: [Int: Lost] = [:]
    /// When ``tick(now:)`` next has something to do; `.max` when nothing.
    private(set) var nextDue = UInt64.max
    private var reconnects = 0
    /// What ``takeCounts(into:)`` reported already.
    private var taken = (refused: 0, reconnects: 0)
    /// Called with a party given up, before its connection in progress (if
    /// any) is closed, so that the close is not taken for another loss.
    var onGiveUp: (Peer) -> Void = { _ in }

    init(loop: ClientLoop, callers: SocketAddress, callees: SocketAddress) {
        self.loop = loop
        addresses = (callers, callees)
    }

    private func address(of peer: Peer) -> SocketAddress { peer.isCaller ? addresses.callers : addresses.callees }

    /// The first connect of a reserved slot; if it fails, the loop's
    /// `onClosed` makes it a loss like any other.
    func start(_ peer: Peer) {
        loop.reopen(peer, to: address(of: peer))
    }

    /// `peer` dropped, or its connect failed: the next attempt waits twice
    /// as long as the last one did (the first not at all).
    func lost(_ peer: Peer, now: UInt64) {
        let entry =
            lost[peer.index].map {
                Lost(since: $0.since, delay: min(max($0.delay * 2, Self.firstDelay), Self.maxDelay))
            }
            ?? Lost(since: now, delay: 0)
        let due = now + entry.delay
        lost[peer.index] = Lost(since: entry.since, delay: entry.delay, due: due)
        nextDue = min(nextDue, due)
    }

    /// `peer` is authenticated: it is no longer lost.
    func ready(_ peer: Peer) {
        lost[peer.index] = nil
    }

    /// Connects the parties whose backoff is over and gives up those whose window passed.
    func tick(now: UInt64) {
        for (index, entry) in lost {
            let peer = loop.peers[index]
            if now >= entry.since + Self.window {
                lost[index] = nil
                onGiveUp(peer)
                if peer.phase != .closed { loop.close(peer, reason: "not connected again within 10 s") }
            } else if let due = entry.due, due <= now {
                lost[index]?.due = nil
                reconnects += 1
                loop.reopen(peer, to: address(of: peer))
            }
        }
        nextDue = lost.values.lazy.map { $0.due ?? $0.since + Self.window }.min() ?? .max
    }

    /// Adds the refused connects and reconnects since the last call to `counts`.
    func takeCounts(into counts: inout ReconnectCounts?) {
        counts?.refusedConnects += loop.refusedConnects - taken.refused
        counts?.reconnects += reconnects - taken.reconnects
        taken = (loop.refusedConnects, reconnects)
    }
}
