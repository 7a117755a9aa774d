import SignalProtocol

/// Which calls that stopped ringing leave the callee a missed-call alert
/// (`push.missedCallAlerts`): one the callee never picked up, because
/// nobody answered in time or the caller gave up. Not one the callee
/// answered, declined or was busy for: they saw it. The one place to
/// change that rule: a busy that Do Not Disturb answered for the callee,
/// for one, may belong here once a call says so.
package enum MissedCallAlert {
    package static func isOwed(for call: Call) -> Bool {
        call.status == .unanswered || call.status == .cancelled
    }
}
