#if canImport(Glibc)
    import Glibc
#endif

/// Whole-file reads for start-up and tools (configuration, secrets,
/// `/proc` files): blocking, so never on an event loop serving traffic.
public enum FileContents {
    /// The whole file at `path`, or nil if it cannot be opened or read.
    public static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            bytes.append(contentsOf: chunk[0 ..< count])
            if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
        }
    }
}
