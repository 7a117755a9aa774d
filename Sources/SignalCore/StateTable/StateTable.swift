import SignalProtocol

/// The published transition table of the call state machine (`ringd states`,
/// docs/STATES.md). Each row is run, not written down: a fresh
/// ``CallStateMachine`` on a manual clock is brought to a state of one call
/// between a caller and a callee, given one input, and its output read. So
/// the table says what the code does, and changes when the code does.
public enum StateTable {
    /// The states a row starts from: no call between the two, then each
    /// status of their call (a request on a terminal one reaches a call the
    /// machine no longer holds, answered from the store).
    static let states: [CallStatus?] = [nil] + CallStatus.allCases

    /// Every row with `settings`: the states in order, and for each every input in order.
    static func rows(settings: SignalingSettings) throws(StateTableError) -> [StateTableRow] {
        var rows: [StateTableRow] = []
        for state in states {
            for input in StateTableInput.all {
                var driver = try StateTableDriver.at(state, settings: input.settings(settings))
                let observed = input.run(&driver)
                let next = observed.pairCall ?? driver.pairCall
                rows.append(
                    StateTableRow(
                        state: state, input: input.name, actor: input.actor, next: next?.status,
                        newCall: next != nil && next?.sessionId != driver.pairSession,
                        reply: observed.reply, events: observed.events.sorted(),
                        timers: observed.timers, pushes: observed.pushes))
            }
        }
        return rows
    }
}

/// A setup that did not reach the state it was for: the machine changed
/// under the table, which then cannot be trusted.
public struct StateTableError: Error, CustomStringConvertible {
    public let description: String
}

/// Who gives an input. The caller's devices are a1 and a2 (a1 places the
/// call), the callee's b1 and b2 (b1 answers), b3 is a device of the callee
/// that connects later, c1 a third party's.
enum StateTableActor: String, Hashable, Sendable {
    case caller
    case callee
    case calleeOtherDevice
    case calleeNewDevice
    case thirdParty
    case server

    /// The device that acts; nil for the server.
    var device: String? {
        switch self {
        case .caller: "a1"
        case .callee: "b1"
        case .calleeOtherDevice: "b2"
        case .calleeNewDevice: "b3"
        case .thirdParty: "c1"
        case .server: nil
        }
    }

    /// As the Markdown table shows it.
    var label: String {
        let who =
            switch self {
            case .caller: "caller"
            case .callee: "callee"
            case .calleeOtherDevice: "callee's other device"
            case .calleeNewDevice: "callee's new device"
            case .thirdParty: "third party"
            case .server: "server"
            }
        return device.map { "\(who) (\($0))" } ?? who
    }
}

/// A party of the table's call, or the third party.
enum StateTableParty: String, Hashable, Sendable {
    case caller, callee, thirdParty
}

/// One row: from `state`, `input` given by `actor`.
struct StateTableRow: Hashable, Sendable {
    /// The status of the call between caller and callee before; nil: none.
    let state: CallStatus?
    let input: String
    let actor: StateTableActor
    /// Its status after; nil: still none.
    let next: CallStatus?
    /// Whether `next` is the status of a call the input created.
    let newCall: Bool
    /// The result sent to the actor's device; nil when it sent no request.
    let reply: StateTableReply?
    /// The devices sent an event (labels as in ``StateTableActor``), sorted.
    let events: [String]
    let timers: [StateTableTimer]
    let pushes: [StateTablePush]

    /// What identifies a row.
    struct Key: Hashable, Sendable, CustomStringConvertible {
        let state: CallStatus?
        let input: String
        let actor: StateTableActor

        var description: String { "\(state?.rawValue ?? "none") | \(input) | \(actor.rawValue)" }
    }

    var key: Key { Key(state: state, input: input, actor: actor) }
}

/// The result an input's request got.
enum StateTableReply: Hashable, Sendable {
    /// Success, carrying a call in this status (nil: `null`, no call);
    /// `ringing` for `initiateCall`; `otherCall` when the call is not the
    /// one between caller and callee.
    case ok(call: CallStatus?, ringing: Int?, otherCall: Bool)
    /// An error; `fromStore` when the machine left the answer to the store
    /// (a session it does not hold live).
    case error(SignalErrorCode, fromStore: Bool)
}

/// A timer the machine asked for, or a restart grace deadline it stored.
enum StateTableTimer: Hashable, Sendable {
    case scheduled(Kind, inMillis: Int64)
    case cancelled(Kind)

    enum Kind: Hashable, Sendable {
        /// The ring timeout.
        case ring
        /// A party's reconnect grace period (its devices are all gone).
        case grace(StateTableParty)
        /// A party's restart grace deadline, stored with the changes.
        case restartGrace(StateTableParty)
    }
}

/// What the machine asked of push.
enum StateTablePush: String, Hashable, Sendable {
    /// Push the ringing call to the callee's devices.
    case ring
    /// The call stopped ringing: drop pushes owed, tell pushed devices.
    case stopped
}
