#if canImport(Glibc)
import Glibc
#endif

/// The few file-system operations start-up needs, through the syscall helper.
public enum FileSystem {
    /// Creates `path` and its missing parents (like `mkdir -p`).
    public static func makeDirectories(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            let result = try? syscallExpectingResult("mkdir") { mkdir(prefix, 0o755) }
            if result == nil {
                var info = stat()
                guard stat(prefix, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                    throw SystemError(call: "mkdir \(prefix)", code: errno)
                }
            }
            prefix += "/"
        }
    }

    /// Writes a new file with `mode`; fails if it exists.
    public static func writeNew(_ path: String, contents: [UInt8], mode: mode_t) throws {
        let fd = FileDescriptor(try syscallExpectingResult("open") {
            open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        })
        var written = 0
        while written < contents.count {
            written += try contents.withUnsafeBytes { bytes in
                try syscallExpectingResult("write") {
                    write(fd.rawValue, bytes.baseAddress! + written, bytes.count - written)
                }
            }
        }
        _ = try syscallExpectingResult("fsync") { fsync(fd.rawValue) }
    }
}
