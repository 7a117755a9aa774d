import CShim
import Dispatch
import Foundation
import Synchronization

/// Copies the write-ahead log back into the database file, mostly on a
/// thread of its own, so the writer rarely waits for it.
///
/// With SQLite's automatic checkpoints the commit that crosses the
/// threshold does the copy and its fdatasync calls, and every commit queued
/// behind it waits: tens of milliseconds on a slow disk, which became the
/// p99 of call setup under load (docs/BENCHMARKS.md). Here the writer's
/// commit hook asks this thread for a PASSIVE checkpoint on its own
/// connection, which copies what no reader still needs while the writer
/// goes on appending.
///
/// SQLite only starts the log over when a write begins with every frame
/// copied back, which a checkpoint running beside a busy writer never
/// achieves: alone, the log would grow without bound. So once it holds
/// ``catchUpFrames`` frames, the writer runs a PASSIVE checkpoint itself
/// (``WALCommitOutcome/catchUp``), after the batch's results were handed on:
/// it copies only what arrived since this thread's last pass, and its next
/// transaction starts the log over. A pass of this thread that is still
/// running (its fdatasync on a slow disk can outlast thousands of commits)
/// makes the catch-up find the checkpoint busy; at ``limitFrames`` the writer
/// waits for that pass to end (``WALCommitOutcome/catchUpAfterPass``), so
/// the log stays bounded however slow the disk. The last connection to
/// close still checkpoints and removes the log.
final class StoreCheckpointer: Sendable {
    /// The growth of the log, in frames (pages), after which the writer's
    /// commit asks this thread for a checkpoint: SQLite's own default threshold.
    static let thresholdFrames: Int32 = 1000
    /// The log size, in frames, from which the writer catches up itself.
    static let catchUpFrames: Int32 = 4 * thresholdFrames
    /// The log size, in frames, at which the writer's catch-up waits for a
    /// running pass of this thread rather than trying again later.
    static let limitFrames: Int32 = catchUpFrames + catchUpFrames / 2

    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let requested = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let runs = Atomic<Int>(0)
    private let framesAtLastRequest = Atomic<Int32>(0)
    private let framesAtLastCatchUp = Atomic<Int32>(0)
    /// Held for the length of each pass, so the writer can wait for one.
    private let pass = Mutex<Void>(())

    /// Opens a second connection to the database at `path` (which must
    /// exist, in WAL mode) and starts the thread.
    init(path: String) throws(StoreError) {
        // A read opens the connection's log; until then a checkpoint is a no-op.
        let connection = try SQLiteDatabase(path: path)
        _ = try connection.scalarInt64("SELECT count(*) FROM sqlite_master")
        let handOff = Mutex<SQLiteDatabase?>(connection)
        let thread = Thread { [self] in
            _ = cshim_name_thread("ringd-checkpoin")
            // The connection is closed before `finished` is signalled, so the
            // writer's connection closes last and removes the log.
            if let database = handOff.withLock({ $0.take() }) { serve(database) }
            finished.signal()
        }
        thread.name = "ringd-checkpoint"
        thread.start()
    }

    /// Called by the writer's commit hook, on the batch's thread, with the
    /// log's size. Below ``catchUpFrames``, asks this thread for a
    /// checkpoint once the log has grown by ``thresholdFrames`` frames since
    /// the last request (the size only falls when SQLite starts the log over,
    /// so asking whenever it is above the threshold would checkpoint after
    /// every commit). From ``catchUpFrames`` on, this thread is left alone so
    /// that its reads do not stop the log from starting over, and the answer
    /// is ``WALCommitOutcome/catchUp``: the writer copies the rest itself;
    /// from ``limitFrames`` on, ``WALCommitOutcome/catchUpAfterPass``: it
    /// first waits for a pass of this thread still running.
    ///
    /// The writer catches up at most once per ``thresholdFrames`` of growth
    /// too: when a reader (a backup, the sqlite3 shell) holds the log, the
    /// catch-up cannot start it over, and repeating it on every commit would
    /// cost a checkpoint per commit.
    func walCommitted(frames: Int32) -> WALCommitOutcome {
        guard frames >= Self.catchUpFrames else {
            if Self.hasGrown(frames, since: framesAtLastRequest) {
                if !requested.exchange(true, ordering: .acquiringAndReleasing) { wake.signal() }
            }
            return .proceed
        }
        guard Self.hasGrown(frames, since: framesAtLastCatchUp) else { return .proceed }
        return frames >= Self.limitFrames ? .catchUpAfterPass : .catchUp
    }

    /// Whether the log of `frames` frames has grown by ``thresholdFrames``
    /// since the size recorded in `mark` (a smaller log than recorded means
    /// SQLite started it over: growth counts from zero); if so, records it.
    private static func hasGrown(_ frames: Int32, since mark: borrowing Atomic<Int32>) -> Bool {
        let recorded = mark.load(ordering: .relaxed)
        guard frames - (frames < recorded ? 0 : recorded) >= thresholdFrames else { return false }
        mark.store(frames, ordering: .relaxed)
        return true
    }

    /// Stops the thread and closes its connection; blocks until both are done.
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        finished.wait()
        finished.signal()
    }

    /// Blocks until a pass of this thread that is running has ended (at once when none is).
    func waitForRunningPass() {
        pass.withLock { _ in }
    }

    /// The number of checkpoints so far that found frames copied back.
    var checkpointCount: Int { runs.load(ordering: .relaxed) }

    private func serve(_ database: SQLiteDatabase) {
        while true {
            wake.wait()
            if stopping.load(ordering: .acquiring) { return }
            requested.store(false, ordering: .releasing)
            pass.withLock { _ in
                do throws(StoreError) {
                    if let copied = try database.checkpointPassively(), copied > 0 { runs.add(1, ordering: .relaxed) }
                } catch {
                    Log.warning("call store: checkpoint failed, the writer will catch up: \(error.message)")
                }
            }
        }
    }
}

/// What the writer does after a commit, as ``StoreCheckpointer/walCommitted(frames:)`` says.
enum WALCommitOutcome {
    /// Nothing: the checkpointer thread copies the log when asked.
    case proceed
    /// Copy the rest of the log now, so the next transaction starts it over.
    case catchUp
    /// The log is at its limit: wait for this thread's running pass, then catch up.
    case catchUpAfterPass
}
