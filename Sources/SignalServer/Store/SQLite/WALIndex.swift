/// The header of the store's log index (the `-shm` file) as the writer's
/// connection has it mapped: whether the next write transaction starts the
/// log over.
///
/// A write transaction that began with every frame of the log copied back
/// into the database rewinds the log, and SQLite then writes the log's
/// header and syncs it (`sqlite3WalFrames`; the first write to an empty
/// log does the same). That sync is the one wait on the disk a commit
/// with `synchronous = NORMAL` has, so an event loop leaves such a commit
/// to the writer thread. The offsets are SQLite's file format
/// (https://sqlite.org/walformat.html), which every SQLite sharing a
/// database must agree on: `mxFrame`, the log's last valid frame, at 16 in
/// the header, and `nBackfill`, the frames copied back, at 96, after the
/// header's two copies.
struct WALIndex {
    private let header: UnsafeRawPointer

    /// The index of `database`'s log; nil before the connection opened it.
    init?(_ database: SQLiteDatabase) {
        guard let header = database.walIndexHeader() else { return nil }
        self.header = header
    }

    /// Whether the open write transaction's first write starts the log over.
    /// Read while it holds the write lock: no other connection can append
    /// to the log then, and checkpoints only copy more of it back, so a log
    /// not all copied back now was not when the transaction began, and the
    /// write appends. (All copied back now but not then errs on the safe
    /// side: the writer thread commits.)
    var restartOwed: Bool {
        header.load(fromByteOffset: 96, as: UInt32.self) >= header.load(fromByteOffset: 16, as: UInt32.self)
    }
}
