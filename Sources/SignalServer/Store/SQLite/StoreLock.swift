import SignalSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The one ringd allowed on a store: an exclusive `flock` on `<store>.lock`,
/// which holds the owner's pid. Two servers on one SQLite file would both
/// take calls, each with a state machine the other does not see, and split
/// the devices between them. The kernel drops the lock when its owner
/// exits, however it exits (kill -9 included), so a stale file never
/// blocks a start.
public final class StoreLock: Sendable {
    private let descriptor: Int32
    private let released = Atomic<Bool>(false)

    /// Takes the lock of the store at `storePath` (creating its directory
    /// and the lock file if missing); throws ``StoreErrorCode/inUse``
    /// naming the store and the holder's pid when another process has it.
    public init(storePath: String) throws(StoreError) {
        let path = storePath + ".lock"
        do {
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path), mode: StoreConnection.directoryMode)
        } catch {
            throw StoreError(.directory, "cannot create the directory of \(storePath): \(error)")
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, StoreConnection.fileMode)
        guard fd >= 0 else {
            throw StoreError(.directory, "cannot open \(path): \(SystemError(call: "open", code: errno))")
        }
        descriptor = fd
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            guard code == EWOULDBLOCK else {
                throw StoreError(.directory, "cannot lock \(path): \(SystemError(call: "flock", code: code))")
            }
            let holder = Self.readPid(fd).map { " (pid \($0))" } ?? ""
            throw StoreError(.inUse, "\(storePath) is in use by another ringd\(holder)")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Gives the store up (at close; the process's exit does it too).
    public func release() {
        if !released.exchange(true, ordering: .relaxed) { closeDescriptor(descriptor) }
    }

    deinit { release() }

    private static func readPid(_ fd: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: bytes[0 ..< count], as: UTF8.self).filter(\.isNumber))
    }
}
