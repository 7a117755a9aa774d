import SignalProtocol

/// What the machine remembers of the calls one user placed lately: when
/// each of the last ones was placed, for `limits.initiatesPerMinute`, and
/// the calls placed with a `clientCallId`, so that a retried
/// `initiateCall` answers the call it placed (docs/PROTOCOL.md, "Retrying
/// initiateCall"). On one node the machine keeps it; in a cluster each
/// transaction reads it from the calls table.
package struct RecentInitiates: Hashable, Sendable {
    /// `initiatedAt` of the calls placed within ``windowMillis``, oldest
    /// first; the newest limit's worth, since older ones decide nothing.
    package var placedAt: [Int64]
    /// The calls placed with a `clientCallId`, by it, as they last changed.
    package var calls: [String: Call]

    package init(placedAt: [Int64] = [], calls: [String: Call] = [:]) {
        self.placedAt = placedAt
        self.calls = calls
    }

    /// The sliding window `limits.initiatesPerMinute` counts over.
    package static let windowMillis: Int64 = 60_000

    var isEmpty: Bool { placedAt.isEmpty && calls.isEmpty }

    /// Drops what no longer matters at `now` (wall clock): placements that
    /// left the window, and calls that are over and past their ring
    /// deadline (`isLive` says which are still live).
    mutating func prune(now: Int64, isLive: (String) -> Bool) {
        placedAt.removeAll { $0 <= now - Self.windowMillis }
        calls = calls.filter { isLive($0.value.sessionId) || now < $0.value.ringDeadline }
    }
}
