import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The writer's connection, behind a lock: whichever thread holds it runs
/// the next batch. The writer thread waits for it; an event loop only takes
/// it when it is free, at the end of a pass, so the saves of that pass
/// commit without a hand-off to another thread and back (two context
/// switches per batch on a busy core; docs/BENCHMARKS.md, lever 5). A loop
/// never waits for the lock: when it is taken, the writer thread is woken
/// for the loop's jobs instead. The writer thread holds it across I/O that
/// waits on the disk (a log restart's sync, a catch-up copy of the log,
/// other threads' reads), so no loop may ever wait for it.
///
/// A batch's completions run under the lock, so batches still report in
/// the order they committed, whichever threads ran them.
final class StoreRunner: Sendable {
    private let writer: Mutex<StoreWriter?>
    /// The thread holding the connection (0 when none), for
    /// ``holdsConnection``: blocking on the store from there would wait for itself.
    private let holder = Atomic<UInt>(0)

    init(_ writer: consuming sending StoreWriter) {
        self.writer = Mutex(writer)
    }

    /// For the writer thread: waits for the connection and runs what is queued.
    func runOnWriterThread() {
        writer.withLock { writer in
            guard let writer else { return }
            holding { _ = writer.runQueued(onLoop: false) }
        }
    }

    /// For an event loop: runs the jobs loops' passes queued at the head of
    /// the queue if the connection is free and committing them waits neither
    /// on the disk nor on another process's lock
    /// (``StoreWriter/runQueued(onLoop:)``); false if the writer thread must
    /// run the queue.
    func runOnLoopIfFree() -> Bool {
        let run = writer.withLockIfAvailable { writer -> StoreRun in
            guard let writer else { return .nothingQueued }
            return holding { writer.runQueued(onLoop: true) }
        }
        switch run {
        case .ran?, .nothingQueued?: return true
        case .leftToWriterThread?, nil: return false
        }
    }

    /// Closes the connection (once the writer thread has run the last job).
    func close() {
        writer.withLock { $0 = nil }
    }

    /// Whether the calling thread holds the connection: it is running a
    /// batch or that batch's completions.
    var holdsConnection: Bool { holder.load(ordering: .acquiring) == UInt(pthread_self()) }

    private func holding<Result>(_ body: () -> Result) -> Result {
        holder.store(UInt(pthread_self()), ordering: .releasing)
        defer { holder.store(0, ordering: .releasing) }
        return body()
    }
}
