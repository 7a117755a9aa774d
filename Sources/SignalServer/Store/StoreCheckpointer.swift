import Dispatch
import Foundation
import Synchronization

/// Copies the write-ahead log back into the database file on a thread of its
/// own, so the writer never waits for it.
///
/// With SQLite's automatic checkpoints the commit that crosses the
/// threshold does the copy and its fdatasync calls, and every commit queued
/// behind it waits: tens of milliseconds on a slow disk, which became the
/// p99 of call setup under load (docs/BENCHMARKS.md). Here the writer's
/// commit hook only asks; this thread runs a PASSIVE checkpoint on its own
/// connection, which copies what no reader still needs while the writer
/// goes on appending, and SQLite starts the log over once all of it was
/// copied. The last connection to close still checkpoints and removes the log.
final class StoreCheckpointer: Sendable {
    /// The log size, in frames (pages), from which a commit asks for a
    /// checkpoint: SQLite's own default threshold.
    static let thresholdFrames: Int32 = 1000

    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let requested = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let runs = Atomic<Int>(0)
    private let framesAtLastRequest = Atomic<Int32>(0)

    /// Opens a second connection to the database at `path` (which must
    /// exist, in WAL mode) and starts the thread.
    init(path: String) throws(StoreError) {
        let connection = try reportingSQLiteErrors { () throws(SQLiteError) in try SQLiteDatabase(path: path) }
        let handOff = Mutex<SQLiteDatabase?>(connection)
        let thread = Thread { [self] in
            // The connection is closed before `finished` is signalled, so the
            // writer's connection closes last and removes the log.
            if let database = handOff.withLock({ $0.take() }) { serve(database) }
            finished.signal()
        }
        thread.name = "ringd-checkpoint"
        thread.start()
    }

    /// Asks for a checkpoint once the log has grown by ``thresholdFrames``
    /// frames since the last request (called by the writer's commit hook
    /// with the log's size, on the writer thread). The size only falls when
    /// SQLite starts the log over; it does not fall after a checkpoint that
    /// ran while the writer went on appending, so asking whenever it is
    /// above the threshold would checkpoint after every commit.
    func walCommitted(frames: Int32) {
        let last = framesAtLastRequest.load(ordering: .relaxed)
        let grown = frames < last ? frames : frames - last
        guard grown >= Self.thresholdFrames else { return }
        framesAtLastRequest.store(frames, ordering: .relaxed)
        if !requested.exchange(true, ordering: .acquiringAndReleasing) { wake.signal() }
    }

    /// Stops the thread and closes its connection; blocks until both are done.
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        finished.wait()
        finished.signal()
    }

    /// The number of checkpoints run so far.
    var checkpointCount: Int { runs.load(ordering: .relaxed) }

    private func serve(_ database: SQLiteDatabase) {
        while true {
            wake.wait()
            if stopping.load(ordering: .acquiring) { return }
            requested.store(false, ordering: .releasing)
            do throws(SQLiteError) {
                try database.execute("PRAGMA wal_checkpoint(PASSIVE)")
                runs.add(1, ordering: .relaxed)
            } catch {
                Log.warning("call store: checkpoint failed, the log keeps growing until one succeeds: \(error)")
            }
        }
    }
}
