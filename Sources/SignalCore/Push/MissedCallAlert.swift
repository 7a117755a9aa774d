import SignalProtocol

/// Which calls that stopped ringing leave the callee a missed-call alert
/// (`push.missedCallAlerts`): one the callee never picked up, because
/// nobody answered in time or the caller gave up. Not one the callee
/// answered, declined or was busy for: they saw it. The one place to
/// change that rule. A call that do-not-disturb placed as busy, or rang
/// silently, pushed no ring, so no device is owed an alert for it: one
/// would have to start from ``PushMachine/ring(_:tokens:now:)`` too.
package enum MissedCallAlert {
    package static func isOwed(for call: Call) -> Bool {
        call.status == .unanswered || call.status == .cancelled
    }
}
