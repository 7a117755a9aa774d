import CSystemd
import SignalSystem
import Synchronization

/// systemd's watchdog (`WatchdogSec=`, passed as WATCHDOG_USEC): WATCHDOG=1
/// every half interval, as sd_watchdog_enabled(3) advises, but only when
/// every event loop ran a task it was handed since the previous ping. A
/// thread that pings regardless would only prove the process exists; this
/// way a stuck loop gets ringd restarted.
final class Watchdog {
    /// Seconds between two pings: half of WATCHDOG_USEC.
    let interval: Double
    private let server: Server
    private let answers: LoopAnswers
    private var round = 0
    private var due: Deadline

    /// Nil unless a watchdog is asked of this process (WATCHDOG_USEC set,
    /// and WATCHDOG_PID unset or this pid); unsets both variables.
    convenience init?(server: Server) {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(1, &microseconds) > 0, microseconds > 0 else { return nil }
        self.init(server: server, interval: Double(microseconds) / 2_000_000)
    }

    /// A watchdog pinging every `interval` seconds; asks the loops at once.
    init(server: Server, interval: Double) {
        self.interval = interval
        self.server = server
        answers = LoopAnswers(loops: server.loopCount)
        due = Deadline.now().adding(seconds: interval)
        askLoops()
    }

    /// Seconds until the next ping is due; zero or less when it is.
    var secondsUntilDue: Double { due.seconds(since: .now()) }

    /// Pings when every loop answered the last round, then starts the next.
    /// Returns whether it pinged.
    @discardableResult
    func ping() -> Bool {
        let missing = answers.missing(round)
        if missing == 0 {
            SystemdNotifier.notify("WATCHDOG=1")
        } else {
            Log.warning("watchdog: \(missing) event loop(s) did not answer within \(interval)s; not pinging")
        }
        askLoops()
        // After a late wake-up (a stopped process, a busy machine) the next
        // round gets a whole interval, rather than pings in a row to catch up.
        let now = Deadline.now()
        let next = due.adding(seconds: interval)
        due = next > now ? next : now.adding(seconds: interval)
        return missing == 0
    }

    private func askLoops() {
        round += 1
        let (answers, round) = (answers, round)
        server.onEveryLoop { loop in answers.answer(loop: loop.index, round: round) }
    }
}

/// The last watchdog round each loop answered.
private final class LoopAnswers: Sendable {
    private let rounds: Mutex<[Int]>

    init(loops: Int) { rounds = Mutex([Int](repeating: 0, count: loops)) }

    func answer(loop index: Int, round: Int) {
        rounds.withLock { $0[index] = max($0[index], round) }
    }

    /// How many loops have not answered `round` yet.
    func missing(_ round: Int) -> Int {
        rounds.withLock { rounds in rounds.filter { $0 < round }.count }
    }
}
