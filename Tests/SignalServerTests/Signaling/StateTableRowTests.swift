import SignalProtocol
import Testing

@testable import SignalCore
@testable import SignalServer

/// The state table (docs/STATES.md) row by row: what each row must say,
/// written out by hand from the rules of docs/PROTOCOL.md ("Semantics"),
/// against what the generator finds by running the machine. A row the
/// generator adds or drops without a line here fails.
///
/// Each line: state | input | actor | next (` new`: a call the input
/// created) | reply (`ok` and the call's status, `ringing N`, `other` for a
/// call that is not the caller's and callee's; or the error code, `store`
/// when the store answers) | events to | timers (`+` scheduled in, `-`
/// cancelled; `restart(…)` is a restart grace deadline stored) | push.
@Suite struct StateTableRowTests {
    static let noCall = """
        none | initiateCall(callee) | caller | initiated new | ok initiated ringing 2 | a2 b1 b2 | ring+45s | ring
        none | initiateCall(caller) | callee | initiated new | ok initiated ringing 2 | a1 a2 b2 | ring+45s | ring
        none | initiateCall(callee) | thirdParty | none | ok initiated ringing 2 other | b1 b2 | ring+45s | ring
        none | acceptCall | callee | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | acceptCall | caller | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | acceptCall | thirdParty | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | ringing | callee | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | ringing (again) | callee | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | ringing | caller | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | ringing | thirdParty | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | rejectCall(rejected) | callee | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | rejectCall(busy) | callee | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | rejectCall(cancelled) | callee | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | rejectCall(rejected) | caller | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | rejectCall(cancelled) | caller | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | rejectCall(rejected) | thirdParty | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | cancelCall | caller | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | cancelCall | callee | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | cancelCall | thirdParty | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | endCall | caller | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | endCall | callee | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | endCall | thirdParty | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | signal | caller | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | signal | callee | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | signal | calleeOtherDevice | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | signal | thirdParty | none | ERR_CALL_SESSION_NOT_FOUND store | - | - | -
        none | getActiveCall | caller | none | ok null | - | - | -
        none | getActiveCall | thirdParty | none | ok null | - | - | -
        none | auth | calleeNewDevice | none | ok null | - | - | -
        none | auth (back within grace) | caller | none | ok null | - | - | -
        none | disconnect | calleeOtherDevice | none | - | - | - | -
        none | disconnect (last device) | caller | none | - | - | - | -
        none | disconnect (last device) | callee | none | - | - | - | -
        none | ring timeout | server | none | - | - | - | -
        none | caller's grace expires | server | none | - | - | - | -
        none | callee's grace expires | server | none | - | - | - | -
        none | unreachable (unreachable: fail) | server | none | - | - | - | -
        none | unreachable after ringing (unreachable: fail) | server | none | - | - | - | -
        none | shutdown (onRestart: end) | server | none | - | - | - | -
        none | restart (onRestart: end) | server | none | - | - | - | -
        none | restart (onRestart: resume) | server | none | - | - | - | -
        none | restart late (onRestart: resume) | server | none | - | - | - | -
        """

    static let initiated = """
        initiated | initiateCall(callee) | caller | initiated | ERR_CALL_BUSY_SELF | - | - | -
        initiated | initiateCall(caller) | callee | ongoing | ok ongoing ringing 0 | a1 a2 b2 | ring- | stopped
        initiated | initiateCall(callee) | thirdParty | initiated | ok busy ringing 0 other | b1 b2 | - | -
        initiated | acceptCall | callee | ongoing | ok ongoing | a1 a2 b2 | ring- | stopped
        initiated | acceptCall | caller | initiated | ERR_CALL_NOT_RECEIVER | - | - | -
        initiated | acceptCall | thirdParty | initiated | ERR_CALL_NOT_A_PART | - | - | -
        initiated | ringing | callee | initiated | ok initiated | a1 a2 b2 | - | -
        initiated | ringing (again) | callee | initiated | ok initiated | - | - | -
        initiated | ringing | caller | initiated | ERR_CALL_NOT_RECEIVER | - | - | -
        initiated | ringing | thirdParty | initiated | ERR_CALL_NOT_A_PART | - | - | -
        initiated | rejectCall(rejected) | callee | rejected | ok rejected | a1 a2 b2 | ring- | stopped
        initiated | rejectCall(busy) | callee | busy | ok busy | a1 a2 b2 | ring- | stopped
        initiated | rejectCall(cancelled) | callee | initiated | ERR_VALIDATION | - | - | -
        initiated | rejectCall(rejected) | caller | initiated | ERR_CALL_NOT_RECEIVER | - | - | -
        initiated | rejectCall(cancelled) | caller | cancelled | ok cancelled | a2 b1 b2 | ring- | stopped
        initiated | rejectCall(rejected) | thirdParty | initiated | ERR_CALL_NOT_A_PART | - | - | -
        initiated | cancelCall | caller | cancelled | ok cancelled | a2 b1 b2 | ring- | stopped
        initiated | cancelCall | callee | initiated | ERR_CALL_NOT_INITIATOR | - | - | -
        initiated | cancelCall | thirdParty | initiated | ERR_CALL_NOT_A_PART | - | - | -
        initiated | endCall | caller | initiated | ERR_CALL_NOT_STARTED | - | - | -
        initiated | endCall | callee | initiated | ERR_CALL_NOT_STARTED | - | - | -
        initiated | endCall | thirdParty | initiated | ERR_CALL_NOT_A_PART | - | - | -
        initiated | signal | caller | initiated | ERR_CALL_NOT_STARTED | - | - | -
        initiated | signal | callee | initiated | ERR_CALL_NOT_STARTED | - | - | -
        initiated | signal | calleeOtherDevice | initiated | ERR_CALL_NOT_STARTED | - | - | -
        initiated | signal | thirdParty | initiated | ERR_CALL_NOT_A_PART | - | - | -
        initiated | getActiveCall | caller | initiated | ok initiated | - | - | -
        initiated | getActiveCall | thirdParty | initiated | ok null | - | - | -
        initiated | auth | calleeNewDevice | initiated | ok initiated | - | - | -
        initiated | auth (back within grace) | caller | initiated | ok initiated | - | - | -
        initiated | disconnect | calleeOtherDevice | initiated | - | - | - | -
        initiated | disconnect (last device) | caller | initiated | - | - | grace(caller)+10s | -
        initiated | disconnect (last device) | callee | initiated | - | - | grace(callee)+10s | -
        initiated | ring timeout | server | unanswered | - | a1 a2 b1 b2 | ring- | stopped
        initiated | caller's grace expires | server | cancelled | - | b1 b2 | ring- | stopped
        initiated | callee's grace expires | server | initiated | - | - | - | -
        initiated | unreachable (unreachable: fail) | server | unanswered | - | a1 a2 | ring- | stopped
        initiated | unreachable after ringing (unreachable: fail) | server | initiated | - | - | - | -
        initiated | shutdown (onRestart: end) | server | cancelled | - | a1 a2 b1 b2 | ring- | stopped
        initiated | restart (onRestart: end) | server | cancelled | - | - | ring- | stopped
        initiated | restart (onRestart: resume) | server | initiated | - | - | restart(caller)+30s, restart(callee)+30s, ring+40s, grace(caller)+30s, grace(callee)+30s | ring
        initiated | restart late (onRestart: resume) | server | unanswered | - | - | ring- | stopped
        """

    static let ongoing = """
        ongoing | initiateCall(callee) | caller | ongoing | ERR_CALL_BUSY_SELF | - | - | -
        ongoing | initiateCall(caller) | callee | ongoing | ERR_CALL_BUSY_SELF | - | - | -
        ongoing | initiateCall(callee) | thirdParty | ongoing | ok busy ringing 0 other | b1 b2 | - | -
        ongoing | acceptCall | callee | ongoing | ERR_CALL_USER_ALREADY_JOINED | - | - | -
        ongoing | acceptCall | caller | ongoing | ERR_CALL_NOT_RECEIVER | - | - | -
        ongoing | acceptCall | thirdParty | ongoing | ERR_CALL_NOT_A_PART | - | - | -
        ongoing | ringing | callee | ongoing | ERR_CALL_USER_ALREADY_JOINED | - | - | -
        ongoing | ringing (again) | callee | ongoing | ERR_CALL_USER_ALREADY_JOINED | - | - | -
        ongoing | ringing | caller | ongoing | ERR_CALL_NOT_RECEIVER | - | - | -
        ongoing | ringing | thirdParty | ongoing | ERR_CALL_NOT_A_PART | - | - | -
        ongoing | rejectCall(rejected) | callee | ongoing | ERR_CALL_ONGOING | - | - | -
        ongoing | rejectCall(busy) | callee | ongoing | ERR_CALL_ONGOING | - | - | -
        ongoing | rejectCall(cancelled) | callee | ongoing | ERR_VALIDATION | - | - | -
        ongoing | rejectCall(rejected) | caller | ongoing | ERR_CALL_NOT_RECEIVER | - | - | -
        ongoing | rejectCall(cancelled) | caller | ongoing | ERR_CALL_ONGOING | - | - | -
        ongoing | rejectCall(rejected) | thirdParty | ongoing | ERR_CALL_NOT_A_PART | - | - | -
        ongoing | cancelCall | caller | ongoing | ERR_CALL_ONGOING | - | - | -
        ongoing | cancelCall | callee | ongoing | ERR_CALL_NOT_INITIATOR | - | - | -
        ongoing | cancelCall | thirdParty | ongoing | ERR_CALL_NOT_A_PART | - | - | -
        ongoing | endCall | caller | ended | ok ended | a2 b1 b2 | - | -
        ongoing | endCall | callee | ended | ok ended | a1 a2 b2 | - | -
        ongoing | endCall | thirdParty | ongoing | ERR_CALL_NOT_A_PART | - | - | -
        ongoing | signal | caller | ongoing | ok null | b1 signal | - | -
        ongoing | signal | callee | ongoing | ok null | a1 signal | - | -
        ongoing | signal | calleeOtherDevice | ongoing | ERR_CALL_OTHER_DEVICE | - | - | -
        ongoing | signal | thirdParty | ongoing | ERR_CALL_NOT_A_PART | - | - | -
        ongoing | getActiveCall | caller | ongoing | ok ongoing | - | - | -
        ongoing | getActiveCall | thirdParty | ongoing | ok null | - | - | -
        ongoing | auth | calleeNewDevice | ongoing | ok ongoing | - | - | -
        ongoing | auth (back within grace) | caller | ongoing | ok ongoing | - | - | -
        ongoing | disconnect | calleeOtherDevice | ongoing | - | - | - | -
        ongoing | disconnect (last device) | caller | ongoing | - | - | grace(caller)+10s | -
        ongoing | disconnect (last device) | callee | ongoing | - | - | grace(callee)+10s | -
        ongoing | ring timeout | server | ongoing | - | - | - | -
        ongoing | caller's grace expires | server | ended | - | b1 b2 | - | -
        ongoing | callee's grace expires | server | ended | - | a1 a2 | - | -
        ongoing | unreachable (unreachable: fail) | server | ongoing | - | - | - | -
        ongoing | unreachable after ringing (unreachable: fail) | server | ongoing | - | - | - | -
        ongoing | shutdown (onRestart: end) | server | ended | - | a1 a2 b1 b2 | - | -
        ongoing | restart (onRestart: end) | server | ended | - | - | - | -
        ongoing | restart (onRestart: resume) | server | ongoing | - | - | restart(caller)+30s, restart(callee)+30s, grace(caller)+30s, grace(callee)+30s | -
        ongoing | restart late (onRestart: resume) | server | ongoing | - | - | restart(caller)+30s, restart(callee)+30s, grace(caller)+30s, grace(callee)+30s | -
        """

    static let ended = """
        ended | initiateCall(callee) | caller | initiated new | ok initiated ringing 2 | a2 b1 b2 | ring+45s | ring
        ended | initiateCall(caller) | callee | initiated new | ok initiated ringing 2 | a1 a2 b2 | ring+45s | ring
        ended | initiateCall(callee) | thirdParty | ended | ok initiated ringing 2 other | b1 b2 | ring+45s | ring
        ended | acceptCall | callee | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | acceptCall | caller | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | acceptCall | thirdParty | ended | ERR_CALL_NOT_A_PART store | - | - | -
        ended | ringing | callee | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | ringing (again) | callee | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | ringing | caller | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | ringing | thirdParty | ended | ERR_CALL_NOT_A_PART store | - | - | -
        ended | rejectCall(rejected) | callee | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | rejectCall(busy) | callee | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | rejectCall(cancelled) | callee | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | rejectCall(rejected) | caller | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | rejectCall(cancelled) | caller | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | rejectCall(rejected) | thirdParty | ended | ERR_CALL_NOT_A_PART store | - | - | -
        ended | cancelCall | caller | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | cancelCall | callee | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | cancelCall | thirdParty | ended | ERR_CALL_NOT_A_PART store | - | - | -
        ended | endCall | caller | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | endCall | callee | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | endCall | thirdParty | ended | ERR_CALL_NOT_A_PART store | - | - | -
        ended | signal | caller | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | signal | callee | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | signal | calleeOtherDevice | ended | ERR_CALL_TERMINATED store | - | - | -
        ended | signal | thirdParty | ended | ERR_CALL_NOT_A_PART store | - | - | -
        ended | getActiveCall | caller | ended | ok null | - | - | -
        ended | getActiveCall | thirdParty | ended | ok null | - | - | -
        ended | auth | calleeNewDevice | ended | ok null | - | - | -
        ended | auth (back within grace) | caller | ended | ok null | - | - | -
        ended | disconnect | calleeOtherDevice | ended | - | - | - | -
        ended | disconnect (last device) | caller | ended | - | - | - | -
        ended | disconnect (last device) | callee | ended | - | - | - | -
        ended | ring timeout | server | ended | - | - | - | -
        ended | caller's grace expires | server | ended | - | - | - | -
        ended | callee's grace expires | server | ended | - | - | - | -
        ended | unreachable (unreachable: fail) | server | ended | - | - | - | -
        ended | unreachable after ringing (unreachable: fail) | server | ended | - | - | - | -
        ended | shutdown (onRestart: end) | server | ended | - | - | - | -
        ended | restart (onRestart: end) | server | ended | - | - | - | -
        ended | restart (onRestart: resume) | server | ended | - | - | - | -
        ended | restart late (onRestart: resume) | server | ended | - | - | - | -
        """

    static let rejected = """
        rejected | initiateCall(callee) | caller | initiated new | ok initiated ringing 2 | a2 b1 b2 | ring+45s | ring
        rejected | initiateCall(caller) | callee | initiated new | ok initiated ringing 2 | a1 a2 b2 | ring+45s | ring
        rejected | initiateCall(callee) | thirdParty | rejected | ok initiated ringing 2 other | b1 b2 | ring+45s | ring
        rejected | acceptCall | callee | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | acceptCall | caller | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | acceptCall | thirdParty | rejected | ERR_CALL_NOT_A_PART store | - | - | -
        rejected | ringing | callee | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | ringing (again) | callee | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | ringing | caller | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | ringing | thirdParty | rejected | ERR_CALL_NOT_A_PART store | - | - | -
        rejected | rejectCall(rejected) | callee | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | rejectCall(busy) | callee | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | rejectCall(cancelled) | callee | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | rejectCall(rejected) | caller | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | rejectCall(cancelled) | caller | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | rejectCall(rejected) | thirdParty | rejected | ERR_CALL_NOT_A_PART store | - | - | -
        rejected | cancelCall | caller | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | cancelCall | callee | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | cancelCall | thirdParty | rejected | ERR_CALL_NOT_A_PART store | - | - | -
        rejected | endCall | caller | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | endCall | callee | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | endCall | thirdParty | rejected | ERR_CALL_NOT_A_PART store | - | - | -
        rejected | signal | caller | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | signal | callee | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | signal | calleeOtherDevice | rejected | ERR_CALL_TERMINATED store | - | - | -
        rejected | signal | thirdParty | rejected | ERR_CALL_NOT_A_PART store | - | - | -
        rejected | getActiveCall | caller | rejected | ok null | - | - | -
        rejected | getActiveCall | thirdParty | rejected | ok null | - | - | -
        rejected | auth | calleeNewDevice | rejected | ok null | - | - | -
        rejected | auth (back within grace) | caller | rejected | ok null | - | - | -
        rejected | disconnect | calleeOtherDevice | rejected | - | - | - | -
        rejected | disconnect (last device) | caller | rejected | - | - | - | -
        rejected | disconnect (last device) | callee | rejected | - | - | - | -
        rejected | ring timeout | server | rejected | - | - | - | -
        rejected | caller's grace expires | server | rejected | - | - | - | -
        rejected | callee's grace expires | server | rejected | - | - | - | -
        rejected | unreachable (unreachable: fail) | server | rejected | - | - | - | -
        rejected | unreachable after ringing (unreachable: fail) | server | rejected | - | - | - | -
        rejected | shutdown (onRestart: end) | server | rejected | - | - | - | -
        rejected | restart (onRestart: end) | server | rejected | - | - | - | -
        rejected | restart (onRestart: resume) | server | rejected | - | - | - | -
        rejected | restart late (onRestart: resume) | server | rejected | - | - | - | -
        """

    static let busy = """
        busy | initiateCall(callee) | caller | initiated new | ok initiated ringing 2 | a2 b1 b2 | ring+45s | ring
        busy | initiateCall(caller) | callee | initiated new | ok initiated ringing 2 | a1 a2 b2 | ring+45s | ring
        busy | initiateCall(callee) | thirdParty | busy | ok initiated ringing 2 other | b1 b2 | ring+45s | ring
        busy | acceptCall | callee | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | acceptCall | caller | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | acceptCall | thirdParty | busy | ERR_CALL_NOT_A_PART store | - | - | -
        busy | ringing | callee | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | ringing (again) | callee | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | ringing | caller | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | ringing | thirdParty | busy | ERR_CALL_NOT_A_PART store | - | - | -
        busy | rejectCall(rejected) | callee | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | rejectCall(busy) | callee | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | rejectCall(cancelled) | callee | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | rejectCall(rejected) | caller | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | rejectCall(cancelled) | caller | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | rejectCall(rejected) | thirdParty | busy | ERR_CALL_NOT_A_PART store | - | - | -
        busy | cancelCall | caller | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | cancelCall | callee | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | cancelCall | thirdParty | busy | ERR_CALL_NOT_A_PART store | - | - | -
        busy | endCall | caller | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | endCall | callee | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | endCall | thirdParty | busy | ERR_CALL_NOT_A_PART store | - | - | -
        busy | signal | caller | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | signal | callee | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | signal | calleeOtherDevice | busy | ERR_CALL_TERMINATED store | - | - | -
        busy | signal | thirdParty | busy | ERR_CALL_NOT_A_PART store | - | - | -
        busy | getActiveCall | caller | busy | ok null | - | - | -
        busy | getActiveCall | thirdParty | busy | ok null | - | - | -
        busy | auth | calleeNewDevice | busy | ok null | - | - | -
        busy | auth (back within grace) | caller | busy | ok null | - | - | -
        busy | disconnect | calleeOtherDevice | busy | - | - | - | -
        busy | disconnect (last device) | caller | busy | - | - | - | -
        busy | disconnect (last device) | callee | busy | - | - | - | -
        busy | ring timeout | server | busy | - | - | - | -
        busy | caller's grace expires | server | busy | - | - | - | -
        busy | callee's grace expires | server | busy | - | - | - | -
        busy | unreachable (unreachable: fail) | server | busy | - | - | - | -
        busy | unreachable after ringing (unreachable: fail) | server | busy | - | - | - | -
        busy | shutdown (onRestart: end) | server | busy | - | - | - | -
        busy | restart (onRestart: end) | server | busy | - | - | - | -
        busy | restart (onRestart: resume) | server | busy | - | - | - | -
        busy | restart late (onRestart: resume) | server | busy | - | - | - | -
        """

    static let cancelled = """
        cancelled | initiateCall(callee) | caller | initiated new | ok initiated ringing 2 | a2 b1 b2 | ring+45s | ring
        cancelled | initiateCall(caller) | callee | initiated new | ok initiated ringing 2 | a1 a2 b2 | ring+45s | ring
        cancelled | initiateCall(callee) | thirdParty | cancelled | ok initiated ringing 2 other | b1 b2 | ring+45s | ring
        cancelled | acceptCall | callee | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | acceptCall | caller | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | acceptCall | thirdParty | cancelled | ERR_CALL_NOT_A_PART store | - | - | -
        cancelled | ringing | callee | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | ringing (again) | callee | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | ringing | caller | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | ringing | thirdParty | cancelled | ERR_CALL_NOT_A_PART store | - | - | -
        cancelled | rejectCall(rejected) | callee | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | rejectCall(busy) | callee | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | rejectCall(cancelled) | callee | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | rejectCall(rejected) | caller | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | rejectCall(cancelled) | caller | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | rejectCall(rejected) | thirdParty | cancelled | ERR_CALL_NOT_A_PART store | - | - | -
        cancelled | cancelCall | caller | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | cancelCall | callee | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | cancelCall | thirdParty | cancelled | ERR_CALL_NOT_A_PART store | - | - | -
        cancelled | endCall | caller | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | endCall | callee | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | endCall | thirdParty | cancelled | ERR_CALL_NOT_A_PART store | - | - | -
        cancelled | signal | caller | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | signal | callee | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | signal | calleeOtherDevice | cancelled | ERR_CALL_TERMINATED store | - | - | -
        cancelled | signal | thirdParty | cancelled | ERR_CALL_NOT_A_PART store | - | - | -
        cancelled | getActiveCall | caller | cancelled | ok null | - | - | -
        cancelled | getActiveCall | thirdParty | cancelled | ok null | - | - | -
        cancelled | auth | calleeNewDevice | cancelled | ok null | - | - | -
        cancelled | auth (back within grace) | caller | cancelled | ok null | - | - | -
        cancelled | disconnect | calleeOtherDevice | cancelled | - | - | - | -
        cancelled | disconnect (last device) | caller | cancelled | - | - | - | -
        cancelled | disconnect (last device) | callee | cancelled | - | - | - | -
        cancelled | ring timeout | server | cancelled | - | - | - | -
        cancelled | caller's grace expires | server | cancelled | - | - | - | -
        cancelled | callee's grace expires | server | cancelled | - | - | - | -
        cancelled | unreachable (unreachable: fail) | server | cancelled | - | - | - | -
        cancelled | unreachable after ringing (unreachable: fail) | server | cancelled | - | - | - | -
        cancelled | shutdown (onRestart: end) | server | cancelled | - | - | - | -
        cancelled | restart (onRestart: end) | server | cancelled | - | - | - | -
        cancelled | restart (onRestart: resume) | server | cancelled | - | - | - | -
        cancelled | restart late (onRestart: resume) | server | cancelled | - | - | - | -
        """

    static let unanswered = """
        unanswered | initiateCall(callee) | caller | initiated new | ok initiated ringing 2 | a2 b1 b2 | ring+45s | ring
        unanswered | initiateCall(caller) | callee | initiated new | ok initiated ringing 2 | a1 a2 b2 | ring+45s | ring
        unanswered | initiateCall(callee) | thirdParty | unanswered | ok initiated ringing 2 other | b1 b2 | ring+45s | ring
        unanswered | acceptCall | callee | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | acceptCall | caller | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | acceptCall | thirdParty | unanswered | ERR_CALL_NOT_A_PART store | - | - | -
        unanswered | ringing | callee | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | ringing (again) | callee | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | ringing | caller | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | ringing | thirdParty | unanswered | ERR_CALL_NOT_A_PART store | - | - | -
        unanswered | rejectCall(rejected) | callee | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | rejectCall(busy) | callee | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | rejectCall(cancelled) | callee | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | rejectCall(rejected) | caller | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | rejectCall(cancelled) | caller | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | rejectCall(rejected) | thirdParty | unanswered | ERR_CALL_NOT_A_PART store | - | - | -
        unanswered | cancelCall | caller | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | cancelCall | callee | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | cancelCall | thirdParty | unanswered | ERR_CALL_NOT_A_PART store | - | - | -
        unanswered | endCall | caller | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | endCall | callee | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | endCall | thirdParty | unanswered | ERR_CALL_NOT_A_PART store | - | - | -
        unanswered | signal | caller | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | signal | callee | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | signal | calleeOtherDevice | unanswered | ERR_CALL_TERMINATED store | - | - | -
        unanswered | signal | thirdParty | unanswered | ERR_CALL_NOT_A_PART store | - | - | -
        unanswered | getActiveCall | caller | unanswered | ok null | - | - | -
        unanswered | getActiveCall | thirdParty | unanswered | ok null | - | - | -
        unanswered | auth | calleeNewDevice | unanswered | ok null | - | - | -
        unanswered | auth (back within grace) | caller | unanswered | ok null | - | - | -
        unanswered | disconnect | calleeOtherDevice | unanswered | - | - | - | -
        unanswered | disconnect (last device) | caller | unanswered | - | - | - | -
        unanswered | disconnect (last device) | callee | unanswered | - | - | - | -
        unanswered | ring timeout | server | unanswered | - | - | - | -
        unanswered | caller's grace expires | server | unanswered | - | - | - | -
        unanswered | callee's grace expires | server | unanswered | - | - | - | -
        unanswered | unreachable (unreachable: fail) | server | unanswered | - | - | - | -
        unanswered | unreachable after ringing (unreachable: fail) | server | unanswered | - | - | - | -
        unanswered | shutdown (onRestart: end) | server | unanswered | - | - | - | -
        unanswered | restart (onRestart: end) | server | unanswered | - | - | - | -
        unanswered | restart (onRestart: resume) | server | unanswered | - | - | - | -
        unanswered | restart late (onRestart: resume) | server | unanswered | - | - | - | -
        """

    static let lines = [noCall, initiated, ongoing, ended, rejected, busy, cancelled, unanswered]
        .flatMap { $0.split(separator: "\n").map(String.init) }

    /// The expectations by row.
    static func expectations() throws -> [StateTableRow.Key: String] {
        var expectations: [StateTableRow.Key: String] = [:]
        for line in lines {
            let cells = line.components(separatedBy: " | ")
            try #require(cells.count == 8, "not 8 cells: \(line)")
            let state = CallStatus(rawValue: cells[0])
            try #require(state != nil || cells[0] == "none", "no state \(cells[0]): \(line)")
            let actor = try #require(StateTableActor(rawValue: cells[2]), "\(line)")
            let key = StateTableRow.Key(state: state, input: cells[1], actor: actor)
            try #require(expectations[key] == nil, "two lines for \(key)")
            expectations[key] = line
        }
        return expectations
    }

    @Test func everyRowSaysWhatItShould() throws {
        let expectations = try Self.expectations()
        for row in try StateTable.rows(settings: StateTable.shippedSettings) {
            guard let expected = expectations[row.key] else { continue }
            #expect(Self.line(row) == expected)
        }
    }

    @Test func everyRowHasAnExpectationAndNoExpectationLacksItsRow() throws {
        let expected = Set(try Self.expectations().keys)
        let rows = try StateTable.rows(settings: StateTable.shippedSettings)
        let generated = Set(rows.map(\.key))
        #expect(rows.count == generated.count, "the generator made two rows with one key")
        let untested = generated.subtracting(expected).map(\.description).sorted()
        let missing = expected.subtracting(generated).map(\.description).sorted()
        #expect(untested.isEmpty, "rows without a line in StateTableRowTests: \(untested)")
        #expect(missing.isEmpty, "lines in StateTableRowTests with no row: \(missing)")
    }

    /// The row in the notation of the lines above.
    static func line(_ row: StateTableRow) -> String {
        let next = (row.next?.rawValue ?? "none") + (row.newCall ? " new" : "")
        let reply: String =
            switch row.reply {
            case nil: "-"
            case .error(let code, let fromStore)?: code.rawValue + (fromStore ? " store" : "")
            case .ok(let call, let ringing, let otherCall)?:
                "ok " + (call?.rawValue ?? "null") + (ringing.map { " ringing \($0)" } ?? "")
                    + (otherCall ? " other" : "")
            }
        let timers = row.timers.map { timer -> String in
            switch timer {
            case .scheduled(let kind, let millis):
                name(kind) + (millis % 1000 == 0 ? "+\(millis / 1000)s" : "+\(millis)ms")
            case .cancelled(let kind): name(kind) + "-"
            }
        }
        let cells = [
            row.state?.rawValue ?? "none", row.input, row.actor.rawValue, next, reply,
            row.events.isEmpty ? "-" : row.events.joined(separator: " "),
            timers.isEmpty ? "-" : timers.joined(separator: ", "),
            row.pushes.isEmpty ? "-" : row.pushes.map(\.rawValue).joined(separator: ", "),
        ]
        return cells.joined(separator: " | ")
    }

    private static func name(_ kind: StateTableTimer.Kind) -> String {
        switch kind {
        case .ring: "ring"
        case .grace(let party): "grace(\(party.rawValue))"
        case .restartGrace(let party): "restart(\(party.rawValue))"
        }
    }
}
