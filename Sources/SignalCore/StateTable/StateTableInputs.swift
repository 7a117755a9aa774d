import SignalProtocol

/// One input of the state table and who gives it: how to run it on a
/// driver already in the row's state. Steps that only prepare it (the
/// other devices leaving first) are run, but the row shows what the input
/// itself did.
struct StateTableInput: Sendable {
    let name: String
    let actor: StateTableActor
    let run: @Sendable (inout StateTableDriver) -> StateTableObservation
    /// The settings the row runs with, from the table's (most rows: those).
    var settings: @Sendable (SignalingSettings) -> SignalingSettings = { $0 }

    /// Every input, in the table's order: each request that touches a call,
    /// then presence, the machine's timers, and the server stopping and starting.
    static let all: [StateTableInput] = requests + presence + server

    private static let caller = StateTableDriver.caller, callee = StateTableDriver.callee

    private static let requests: [StateTableInput] = [
        request("initiateCall(callee)", by: .caller) { _ in
            .initiateCall(receiverId: callee, callType: .audio, timeout: nil, metadata: nil)
        },
        request("initiateCall(caller)", by: .callee) { _ in
            .initiateCall(receiverId: caller, callType: .audio, timeout: nil, metadata: nil)
        },
        request("initiateCall(callee)", by: .thirdParty) { _ in
            .initiateCall(receiverId: callee, callType: .audio, timeout: nil, metadata: nil)
        },
        request("acceptCall", by: .callee) { .acceptCall(sessionId: $0) },
        request("acceptCall", by: .caller) { .acceptCall(sessionId: $0) },
        request("acceptCall", by: .thirdParty) { .acceptCall(sessionId: $0) },
        request("ringing", by: .callee) { .ringing(sessionId: $0) },
        StateTableInput(name: "ringing (again)", actor: .callee) { driver in
            driver.send(.ringing(sessionId: driver.session), from: "b1")
            return driver.send(.ringing(sessionId: driver.session), from: "b1")
        },
        request("ringing", by: .caller) { .ringing(sessionId: $0) },
        request("ringing", by: .thirdParty) { .ringing(sessionId: $0) },
        request("rejectCall(rejected)", by: .callee) { .rejectCall(sessionId: $0, status: .rejected) },
        request("rejectCall(busy)", by: .callee) { .rejectCall(sessionId: $0, status: .busy) },
        request("rejectCall(cancelled)", by: .callee) { .rejectCall(sessionId: $0, status: .cancelled) },
        request("rejectCall(rejected)", by: .caller) { .rejectCall(sessionId: $0, status: .rejected) },
        request("rejectCall(cancelled)", by: .caller) { .rejectCall(sessionId: $0, status: .cancelled) },
        request("rejectCall(rejected)", by: .thirdParty) { .rejectCall(sessionId: $0, status: .rejected) },
        request("cancelCall", by: .caller) { .cancelCall(sessionId: $0) },
        request("cancelCall", by: .callee) { .cancelCall(sessionId: $0) },
        request("cancelCall", by: .thirdParty) { .cancelCall(sessionId: $0) },
        request("endCall", by: .caller) { .endCall(sessionId: $0) },
        request("endCall", by: .callee) { .endCall(sessionId: $0) },
        request("endCall", by: .thirdParty) { .endCall(sessionId: $0) },
        request("signal", by: .caller) { .signal(sessionId: $0, payload: .object([("kind", .string("offer"))])) },
        request("signal", by: .callee) { .signal(sessionId: $0, payload: .object([("kind", .string("answer"))])) },
        request("signal", by: .calleeOtherDevice) {
            .signal(sessionId: $0, payload: .object([("kind", .string("answer"))]))
        },
        request("signal", by: .thirdParty) { .signal(sessionId: $0, payload: .object([("kind", .string("offer"))])) },
        request("getActiveCall", by: .caller) { _ in .getActiveCall },
        request("getActiveCall", by: .thirdParty) { _ in .getActiveCall },
    ]

    private static let presence: [StateTableInput] = [
        StateTableInput(name: "auth", actor: .calleeNewDevice) { $0.connect("b3") },
        StateTableInput(name: "auth (back within grace)", actor: .caller) { driver in
            let half = driver.settings.reconnectGraceMillis / 2
            driver.disconnect("a2")
            driver.disconnect("a1")
            driver.advance(by: half)
            var observed = driver.connect("a1")
            observed.merge(driver.advance(by: driver.settings.reconnectGraceMillis - half))
            return observed
        },
        StateTableInput(name: "disconnect", actor: .calleeOtherDevice) { $0.disconnect("b2") },
        StateTableInput(name: "disconnect (last device)", actor: .caller) { driver in
            driver.disconnect("a2")
            return driver.disconnect("a1")
        },
        StateTableInput(name: "disconnect (last device)", actor: .callee) { driver in
            driver.disconnect("b2")
            return driver.disconnect("b1")
        },
        StateTableInput(name: "ring timeout", actor: .server) { driver in
            let deadline =
                driver.pairCall.map { driver.time.monotonic + $0.ringDeadline - driver.time.wall }
                ?? driver.time.monotonic + driver.ringTimeoutMillis
            return driver.fire(.ring(sessionId: driver.session), at: deadline)
        },
        graceExpiry("caller's grace expires", of: ["a2", "a1"]),
        graceExpiry("callee's grace expires", of: ["b2", "b1"]),
        StateTableInput(
            name: "unreachable (unreachable: fail)", actor: .server,
            run: { driver in
                driver.disconnect("b2")
                driver.disconnect("b1")
                return driver.unreachable()
            }, settings: failing),
        StateTableInput(
            name: "unreachable after ringing (unreachable: fail)", actor: .server,
            run: { driver in
                driver.send(.ringing(sessionId: driver.session), from: "b1")
                driver.disconnect("b2")
                driver.disconnect("b1")
                return driver.unreachable()
            }, settings: failing),
    ]

    /// `calls.unreachable: fail`, for the rows about it (with `ring` the
    /// push side never reports, and the machine would not act on it).
    private static let failing: @Sendable (SignalingSettings) -> SignalingSettings = { settings in
        var settings = settings
        settings.unreachable = .fail
        return settings
    }

    private static let server: [StateTableInput] = [
        StateTableInput(name: "shutdown (onRestart: end)", actor: .server) { $0.shutdown() },
        StateTableInput(name: "restart (onRestart: end)", actor: .server) { $0.restart(.end, after: 5_000) },
        StateTableInput(name: "restart (onRestart: resume)", actor: .server) { $0.restart(.resume, after: 5_000) },
        StateTableInput(name: "restart late (onRestart: resume)", actor: .server) {
            $0.restart(.resume, after: 60_000)
        },
    ]

    /// What each input is, for the table's legend.
    static let summaries: [String: String] = [
        "initiateCall(callee)": "`initiateCall` to the callee: a new call from the caller; from a third party, "
            + "a call to a callee who may be busy",
        "initiateCall(caller)": "`initiateCall` from the callee to the caller: glare while the caller rings it",
        "acceptCall": "`acceptCall` naming the call",
        "ringing": "`ringing` naming the call: the device shows the ring",
        "ringing (again)": "b1 sends `ringing` twice (the row shows the second)",
        "rejectCall(rejected)": "`rejectCall` naming the call, `status` `rejected` (the default)",
        "rejectCall(busy)": "`rejectCall` naming the call, `status` `busy`",
        "rejectCall(cancelled)": "`rejectCall` naming the call, `status` `cancelled`",
        "cancelCall": "`cancelCall` naming the call",
        "endCall": "`endCall` naming the call",
        "signal": "`signal` naming the call, from the device that placed it (the caller's) or accepted it "
            + "(the callee's); relayed to the other one, changing nothing",
        "getActiveCall": "`getActiveCall`",
        "auth": "another device of the callee authenticates (`auth`)",
        "auth (back within grace)": "a2 and a1 disconnect, a1 authenticates again halfway through the caller's "
            + "reconnect grace, and the grace period's end passes (the row shows both)",
        "disconnect": "a device disconnects while another of its user's stays",
        "disconnect (last device)": "the user's other device disconnects, then this one: none is left "
            + "(the row shows the last)",
        "ring timeout": "the call's ring timer fires at its deadline (a stale timer once the call stopped ringing)",
        "caller's grace expires": "the caller's devices all disconnect and none comes back within the reconnect "
            + "grace (the row shows its end)",
        "callee's grace expires": "the same for the callee's devices",
        "unreachable (unreachable: fail)": "with `calls.unreachable: fail`, the callee's devices disconnect and "
            + "the push side reports nothing can ring it (no push token, or every push failed for good; "
            + "the row shows the report)",
        "unreachable after ringing (unreachable: fail)": "the same after b1 sent `ringing` (a device that showed "
            + "the ring may ring on through CallKit without its connection)",
        "shutdown (onRestart: end)": "SIGTERM with `calls.onRestart: end`; with `resume` the machine is not asked, "
            + "and the calls stay live in the store for the next start",
        "restart (onRestart: end)": "ringd starts 5 s later on what the store holds, with `calls.onRestart: end`",
        "restart (onRestart: resume)": "ringd starts 5 s later with `calls.onRestart: resume` (the default); "
            + "nobody is connected yet",
        "restart late (onRestart: resume)": "the same, 60 s later: past the ring deadline",
    ]

    /// A request from the actor's device naming the call (its session id, or one that does not exist).
    private static func request(
        _ name: String, by actor: StateTableActor,
        _ make: @escaping @Sendable (String) -> ClientRequest
    ) -> StateTableInput {
        StateTableInput(name: name, actor: actor) { driver in
            guard let device = actor.device else { return StateTableObservation() }
            return driver.send(make(driver.session), from: device)
        }
    }

    private static func graceExpiry(_ name: String, of labels: [String]) -> StateTableInput {
        StateTableInput(name: name, actor: .server) { driver in
            for label in labels { driver.disconnect(label) }
            return driver.advance(by: driver.settings.reconnectGraceMillis)
        }
    }
}
