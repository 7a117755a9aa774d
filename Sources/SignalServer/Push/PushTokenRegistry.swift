import SignalCore
import SignalProtocol
import Synchronization

/// How pushes to one device have gone (`GET /v1/users/{uid}/push-tokens`).
public struct PushDeviceState: Sendable, Hashable {
    /// The last outcome and when (ms since the Unix epoch).
    public var lastOutcome: PushOutcome?
    public var lastAt: Int64?
    /// Why the last push failed, if it did.
    public var lastError: String?
    /// Outcomes since the server started.
    public var counts: [PushOutcome: Int] = [:]

    public init() {}

    var json: JSONValue {
        .object([
            ("lastOutcome", lastOutcome.map { .string($0.rawValue) } ?? .null),
            ("lastAt", lastAt.map(JSONValue.integer) ?? .null),
            ("lastError", lastError.map(JSONValue.string) ?? .null),
            ("counts", .object(PushOutcome.allCases.map { ($0.rawValue, .integer(Int64(counts[$0] ?? 0))) })),
        ])
    }
}

/// The push tokens in memory, mirroring the store's `push_tokens` (it is
/// updated from the store's completions, after each write committed; in a
/// cluster also from what other nodes changed, ``replace(tokensOf:with:)``), and
/// how pushes to each device have gone. Read when a call rings, from the
/// thread that ran the store's batch; written there and by the push worker.
final class PushTokenRegistry: Sendable {
    private struct State {
        var tokens: [String: [String: RegisteredPushToken]] = [:]
        var devices: [PushDeviceKey: PushDeviceState] = [:]
        var totals: [PushOutcome: Int] = [:]
        var alertTotals: [PushOutcome: Int] = [:]

        /// Forgets the device's token and how its pushes went.
        mutating func drop(_ device: PushDeviceKey) {
            tokens[device.uid]?[device.deviceId] = nil
            if tokens[device.uid]?.isEmpty == true { tokens[device.uid] = nil }
            devices[device] = nil
        }
    }

    private let state = Mutex(State())

    init(_ tokens: [RegisteredPushToken] = []) {
        state.withLock { state in
            for token in tokens { state.tokens[token.uid, default: [:]][token.deviceId] = token }
        }
    }

    /// Forgets every token and outcome (the test API's reset, after the store's table was emptied).
    func removeAll() { state.withLock { $0 = State() } }

    /// `uid`'s tokens, by device id.
    func tokens(of uid: String) -> [RegisteredPushToken] {
        state.withLock { ($0.tokens[uid] ?? [:]).values.sorted { $0.deviceId < $1.deviceId } }
    }

    /// `uid`'s tokens with how pushes to each device have gone.
    func devices(of uid: String) -> [(token: RegisteredPushToken, state: PushDeviceState)] {
        state.withLock { state in
            (state.tokens[uid] ?? [:]).values.sorted { $0.deviceId < $1.deviceId }.map { token in
                (token, state.devices[PushDeviceKey(uid: uid, deviceId: token.deviceId)] ?? PushDeviceState())
            }
        }
    }

    func token(of device: PushDeviceKey) -> RegisteredPushToken? {
        state.withLock { $0.tokens[device.uid]?[device.deviceId] }
    }

    /// A save committed: the token is its device's, and no longer theirs it
    /// moved from or the user's devices it evicted.
    func saved(_ saved: PushTokenSaved) {
        state.withLock { state in
            for device in saved.movedFrom + saved.evicted { state.drop(device) }
            state.tokens[saved.token.uid, default: [:]][saved.token.deviceId] = saved.token
        }
    }

    /// A delete committed; with `only`, it removed the token only if it was
    /// still that registration.
    func removed(_ device: PushDeviceKey, only registration: RegisteredPushToken? = nil) {
        state.withLock { state in
            guard let current = state.tokens[device.uid]?[device.deviceId] else { return }
            if let registration,
                current.registration.token != registration.registration.token
                    || current.updatedAt > registration.updatedAt
            {
                return
            }
            state.drop(device)
        }
    }

    /// The device's alert token was cleared in the store, while the device
    /// had `registration`: the device keeps its VoIP token without it.
    func alertTokenCleared(_ device: PushDeviceKey, only registration: RegisteredPushToken) {
        state.withLock { state in
            guard var current = state.tokens[device.uid]?[device.deviceId], current == registration else { return }
            current.registration.alertToken = nil
            state.tokens[device.uid]?[device.deviceId] = current
        }
    }

    /// `uids`' tokens are now `tokens`, as another node's change left them
    /// (cluster mode); with nil, every user's (re-read after this node may
    /// have missed changes). How pushes went is kept for devices whose
    /// token stayed the same.
    func replace(tokensOf uids: Set<String>?, with tokens: [RegisteredPushToken]) {
        state.withLock { state in
            let replaced = uids ?? Set(state.tokens.keys)
            var fresh: [String: [String: RegisteredPushToken]] = [:]
            for token in tokens { fresh[token.uid, default: [:]][token.deviceId] = token }
            for uid in replaced.union(fresh.keys) {
                for (deviceId, old) in state.tokens[uid] ?? [:]
                where fresh[uid]?[deviceId]?.registration != old.registration {
                    state.devices[PushDeviceKey(uid: uid, deviceId: deviceId)] = nil
                }
                state.tokens[uid] = fresh[uid]
            }
        }
    }

    /// Counts an outcome of a push to `device` (its state only while it has
    /// a token); `alert` says it was a missed-call alert, which is counted
    /// among every push and on its own too.
    func record(_ outcome: PushOutcome, for device: PushDeviceKey, at now: Int64, error: String?, alert: Bool = false) {
        state.withLock { state in
            state.totals[outcome, default: 0] += 1
            if alert { state.alertTotals[outcome, default: 0] += 1 }
            guard state.tokens[device.uid]?[device.deviceId] != nil else { return }
            var entry = state.devices[device] ?? PushDeviceState()
            entry.lastOutcome = outcome
            entry.lastAt = now
            entry.lastError = error
            entry.counts[outcome, default: 0] += 1
            state.devices[device] = entry
        }
    }

    /// Outcomes of every push since the server started.
    var totals: [PushOutcome: Int] { state.withLock { $0.totals } }

    /// Outcomes of the missed-call alerts among them.
    var alertTotals: [PushOutcome: Int] { state.withLock { $0.alertTotals } }
}
