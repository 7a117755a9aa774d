#if canImport(Glibc)
import Glibc
#endif

/// Creates the directory a database file lives in.
enum StoreDirectory {
    /// Creates the directory part of `path` and every missing parent, like
    /// `mkdir -p`; directories that exist already are fine. A path without a
    /// slash lives in the working directory and needs nothing.
    static func createParent(of path: String) throws(StoreError) {
        guard let slash = path.lastIndex(of: "/") else { return }
        let directory = String(path[..<slash])
        var prefixes: [String] = []
        for index in directory.indices where directory[index] == "/" && index != directory.startIndex {
            prefixes.append(String(directory[..<index]))
        }
        if !directory.isEmpty { prefixes.append(directory) }
        for prefix in prefixes {
            do throws(SystemError) {
                _ = try syscallExpectingResult("mkdir") { mkdir(prefix, 0o755) }
            } catch where error.code == EEXIST {
                continue
            } catch {
                throw StoreError(.directory, "cannot create \(prefix): \(error)")
            }
        }
        guard !directory.isEmpty else { return }
        var info = stat()
        do throws(SystemError) {
            _ = try syscallExpectingResult("stat") { stat(directory, &info) }
        } catch {
            throw StoreError(.directory, "cannot inspect \(directory): \(error)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw StoreError(.directory, "\(directory) is not a directory")
        }
    }
}
