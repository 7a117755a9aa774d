import CSQLite
import Dispatch
import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A slow disk under one directory, for a `ringd` child: a library it loads
/// with `LD_PRELOAD` that makes every `fsync` and `fdatasync` of a file in
/// the directory wait while ``slow`` is on, and logs each one with the
/// thread that made it. No device or privilege needed: the waits are where
/// a slow disk makes SQLite wait, on the syncs; writes still land in the
/// page cache at once, as they do on a real disk.
final class SlowDisk {
    /// One sync of a file in the directory, as the library logged it.
    struct Sync: CustomStringConvertible {
        /// The thread's name (at most 15 bytes: `ringd-checkpoin`).
        let thread: String
        let path: String
        /// Whether it waited.
        let slowed: Bool
        /// Whether it returned.
        var ended = false

        var description: String { "\(thread) \(path)\(slowed ? " slow" : "")\(ended ? "" : " (running)")" }
    }

    /// The library's own files: its source, the library, the switch, the log.
    private let files: TemporaryDirectory
    private let watched: String
    private let milliseconds: Int

    /// Builds the library (with the C compiler on `PATH`) to slow the syncs of
    /// files under `directory` by `milliseconds` each.
    init(under directory: String, milliseconds: Int) throws {
        files = try TemporaryDirectory(prefix: "ringd-slow-disk")
        // The kernel names descriptors by their resolved path.
        watched = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path + "/"
        self.milliseconds = milliseconds
        let compiler = try Self.compiler()
        try Self.source.write(toFile: files.file("slowdisk.c"), atomically: true, encoding: .utf8)
        let built = try Command.run(
            compiler, ["-shared", "-fPIC", "-O2", "-o", files.file("slowdisk.so"), files.file("slowdisk.c"), "-ldl"])
        guard built.status == 0 else { throw SlowDiskError("\(compiler) failed: \(built.output)") }
    }

    /// What ringd's environment needs for the library to act.
    var environment: [String: String] {
        [
            "LD_PRELOAD": files.file("slowdisk.so"), "SLOWDISK_DIR": watched, "SLOWDISK_MS": String(milliseconds),
            "SLOWDISK_SWITCH": files.file("slow"), "SLOWDISK_LOG": files.file("syncs.log"),
        ]
    }

    /// Whether syncs wait (they do while the switch file exists).
    var slow: Bool {
        get { files.contains("slow") }
        set {
            if newValue {
                _ = FileManager.default.createFile(atPath: files.file("slow"), contents: nil)
            } else {
                try? FileManager.default.removeItem(atPath: files.file("slow"))
            }
        }
    }

    /// Every sync so far, in the order they began.
    var syncs: [Sync] {
        let log = (try? String(contentsOfFile: files.file("syncs.log"), encoding: .utf8)) ?? ""
        var syncs: [Sync] = []
        for line in log.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 3).map(String.init)
            guard fields.count == 4 else { continue }
            if fields[0] == "begin" {
                syncs.append(Sync(thread: fields[1], path: fields[3], slowed: fields[2] == "slow"))
            } else if let index = syncs.firstIndex(where: { $0.thread == fields[1] && !$0.ended }) {
                syncs[index].ended = true
            }
        }
        return syncs
    }

    /// Removes the library's files.
    func remove() { files.remove() }

    /// The first C compiler on `PATH`.
    private static func compiler() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        for name in ["cc", "clang", "gcc"] {
            for directory in path.split(separator: ":") where access("\(directory)/\(name)", X_OK) == 0 {
                return "\(directory)/\(name)"
            }
        }
        throw SlowDiskError("no C compiler (cc, clang, gcc) on PATH \(path)")
    }

    /// The library. Each line it logs is one `write` to a file opened for
    /// appending, so lines from several threads never interleave.
    private static let source = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <sys/prctl.h>
        #include <time.h>
        #include <unistd.h>

        static void say(const char *line, int length) {
            int log = open(getenv("SLOWDISK_LOG"), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
            if (log < 0) return;
            if (write(log, line, length) < 0) {}
            close(log);
        }

        static int synced(int fd, int (*sync)(int)) {
            const char *dir = getenv("SLOWDISK_DIR");
            char link[64], path[4096], thread[17] = {0}, line[4200];
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(link, path, sizeof path - 1);
            if (dir == NULL || n < 0) return sync(fd);
            path[n] = 0;
            if (strncmp(path, dir, strlen(dir)) != 0) return sync(fd);
            prctl(PR_GET_NAME, thread);
            int slow = access(getenv("SLOWDISK_SWITCH"), F_OK) == 0;
            say(line, snprintf(line, sizeof line, "begin %s %s %s\n", thread, slow ? "slow" : "fast", path));
            if (slow) {
                long ms = atol(getenv("SLOWDISK_MS"));
                struct timespec left = {ms / 1000, (ms % 1000) * 1000000L};
                while (nanosleep(&left, &left) != 0) {}
            }
            int result = sync(fd);
            say(line, snprintf(line, sizeof line, "end %s - %s\n", thread, path));
            return result;
        }

        int fsync(int fd) {
            static int (*real)(int);
            if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
            return synced(fd, real);
        }

        int fdatasync(int fd) {
            static int (*real)(int);
            if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
            return synced(fd, real);
        }
        """#
}

struct SlowDiskError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `GET /healthz` on fresh connections, one after another on a thread of its
/// own until stopped: how long each answer took, and any that failed.
final class HealthzSampler: Sendable {
    private let latencies = Mutex<[Double]>([])
    private let failures = Mutex<[String]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(port: Int) {
        Thread { [self] in
            while !stopping.load(ordering: .acquiring) {
                let start = monotonicSeconds()
                do {
                    let response = try SignalingIntegration.rest(port: port, "GET", "/healthz", apiKey: nil)
                    if response.status != 200 { failures.withLock { $0.append("\(response)") } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                latencies.withLock { $0.append(monotonicSeconds() - start) }
                // About a hundred a second: a loop stuck for longer than a
                // request is caught by the request in flight.
                usleep(10_000)
            }
            finished.signal()
        }.start()
    }

    /// The number of answers so far.
    var count: Int { latencies.withLock { $0.count } }

    /// Stops sampling; every latency (seconds) and failure.
    func stop() -> (latencies: [Double], failures: [String]) {
        stopping.store(true, ordering: .releasing)
        finished.wait()
        return (latencies.withLock { $0 }, failures.withLock { $0 })
    }
}

/// A connection of this process to ringd's store: another process, as ringd
/// sees it (a backup, the sqlite3 shell).
final class ForeignStoreConnection {
    private let handle: OpaquePointer

    init(path: String) throws {
        var opened: OpaquePointer?
        guard sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let opened else {
            sqlite3_close_v2(opened)
            throw SlowDiskError("cannot open \(path)")
        }
        handle = opened
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw SlowDiskError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    /// Copies the log back as far as no reader needs it: the frames in the
    /// log and those copied; nil while another checkpoint runs.
    func checkpoint() throws -> (log: Int32, copied: Int32)? {
        // Until a connection reads, it has not opened the log: nothing to copy.
        try execute("SELECT count(*) FROM sqlite_master")
        var log: Int32 = 0, copied: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        if code == SQLITE_BUSY { return nil }
        guard code == SQLITE_OK else { throw SlowDiskError("checkpoint: \(String(cString: sqlite3_errmsg(handle)))") }
        return (log, copied)
    }
}
