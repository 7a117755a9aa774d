import Foundation
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// The token secret and the store are the owner's only: files ringd creates
/// are 0600, directories 0700, and a kept secret others may read is refused.
/// Real files in a temporary directory; the process's umask (022 here) is
/// left alone, since tests run in parallel.
@Suite(.blocking) struct FilePermissionTests {
    /// The permission bits of `path`, or nil when it does not exist.
    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : nil
    }

    private func write(_ text: String, to path: String, mode: mode_t) throws {
        try FileSystem.writeNew(path, contents: Array(text.utf8), mode: mode)
        // writeNew's mode is less the umask; set it exactly.
        #expect(chmod(path, mode) == 0)
    }

    private static let hexSecret = String(repeating: "ab", count: 32)

    @Test func aGeneratedSecretAndItsDirectoryAreTheOwnersOnly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let data = directory.file("data/nested")
        let secret = try TokenSecret.load(configured: nil, directory: data)
        #expect(secret.count == 32)
        #expect(mode(data + "/" + TokenSecret.fileName) == 0o600)
        #expect(mode(data) == 0o700)
        #expect(mode(directory.file("data")) == 0o700)
        #expect(try TokenSecret.load(configured: nil, directory: data) == secret, "kept across starts")
    }

    /// A store in memory has no data directory: the secret is new each start
    /// and written nowhere.
    @Test func withoutADataDirectoryEachSecretIsNew() throws {
        let first = try TokenSecret.load(configured: nil, directory: nil)
        #expect(first.count == 32)
        #expect(try TokenSecret.load(configured: nil, directory: nil) != first)
        #expect(try TokenSecret.load(configured: Self.hexSecret, directory: nil) == Array(Self.hexSecret.utf8))
    }

    /// Any group or other bit is refused, naming the mode and both ways out.
    @Test(arguments: [0o644, 0o640, 0o604, 0o620, 0o602, 0o660] as [mode_t])
    func aSecretOthersMayAccessIsRefused(mode fileMode: mode_t) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file(TokenSecret.fileName)
        try write(Self.hexSecret + "\n", to: path, mode: fileMode)
        #expect {
            _ = try TokenSecret.load(configured: nil, directory: directory.path)
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.message.contains(path) && error.message.contains("mode 0\(String(fileMode, radix: 8))")
                && error.message.contains("chmod 600 \(path)") && error.message.contains("delete it")
        }
        #expect(mode(path) == fileMode, "refused, not changed")
    }

    @Test(arguments: [0o600, 0o400] as [mode_t])
    func aSecretOnlyTheOwnerMayReadIsLoaded(mode fileMode: mode_t) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try write(Self.hexSecret + "\n", to: directory.file(TokenSecret.fileName), mode: fileMode)
        #expect(try TokenSecret.load(configured: nil, directory: directory.path) == Array(repeating: 0xAB, count: 32))
    }

    /// The database, its -wal and -shm files (made by SQLite once a write
    /// goes through WAL mode), the lock file and the created directory.
    @Test func theStoreFilesAreTheOwnersOnly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storePath = directory.file("store/ringd.sqlite")
        let lock = try StoreLock(storePath: storePath)
        defer { lock.release() }
        let store = try CallStore(path: storePath)
        defer { store.close() }
        try waitForResult { store.saveRevocation(uid: "alice", revokedAt: 1, completion: $0) }.get()
        #expect(mode(directory.file("store")) == 0o700)
        for suffix in ["", "-wal", "-shm", ".lock"] {
            #expect(mode(storePath + suffix) == 0o600, "ringd.sqlite\(suffix)")
        }
    }
}
