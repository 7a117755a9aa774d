import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// ringd's side of systemd's notification protocol (`Type=notify`,
/// `NOTIFY_SOCKET`): READY=1 once it serves, STOPPING=1 when a graceful
/// stop starts, WATCHDOG=1 while its loops run (``Watchdog``). Without
/// NOTIFY_SOCKET every notification is a no-op, so ringd run by hand or by
/// the tests is unaffected.
enum SystemdNotifier {
    /// Sends `state` (newline-separated `KEY=VALUE` lines). The variable
    /// stays set, as ringd notifies more than once. It may block while the
    /// manager's queue is full: call it from the main thread, never a loop.
    static func notify(_ state: String) {
        let result = sd_notify(0, state)
        if result < 0 {
            let first = state.split(separator: "\n").first.map(String.init) ?? state
            Log.warning("sd_notify(\(first)) failed: \(String(cString: strerror(-result)))")
        }
    }
}
