import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The few file-system operations start-up needs, through the syscall helper.
public enum FileSystem {
    /// Creates `directory` and every missing parent, like `mkdir -p`, each
    /// with `mode` (less the umask); directories that exist already are fine
    /// and keep their mode.
    public static func makeDirectories(_ directory: String, mode: mode_t = 0o755) throws(SystemError) {
        var prefixes: [String] = []
        for index in directory.indices where directory[index] == "/" && index != directory.startIndex {
            prefixes.append(String(directory[..<index]))
        }
        if !directory.isEmpty { prefixes.append(directory) }
        for prefix in prefixes {
            do throws(SystemError) {
                _ = try syscallExpectingResult("mkdir") { mkdir(prefix, mode) }
            } catch  where error.code == EEXIST {
                continue
            }
        }
        guard !directory.isEmpty else { return }
        var info = stat()
        _ = try syscallExpectingResult("stat") { stat(directory, &info) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw SystemError(call: "mkdir \(directory)", code: ENOTDIR) }
    }

    /// The directory part of a file path ("." for a bare file name).
    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Writes a new file with `mode`; fails if it exists.
    public static func writeNew(_ path: String, contents: [UInt8], mode: mode_t) throws {
        let fd = FileDescriptor(
            try syscallExpectingResult("open") {
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
