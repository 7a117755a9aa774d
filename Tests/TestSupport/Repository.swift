import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Paths in the repository and the executables the tests run.
public enum Repository {
    /// The package root: the nearest directory above `file` that holds Package.swift.
    public static func root(file: String = #filePath) -> String {
        var directory = file
        while let slash = directory.lastIndex(of: "/") {
            directory = String(directory[..<slash])
            if FileManager.default.fileExists(atPath: directory + "/Package.swift") { return directory }
        }
        return FileManager.default.currentDirectoryPath
    }

    /// Where a built executable may be: next to the test bundle, else in
    /// `.build/debug` under the package root.
    public static func executableCandidates(_ name: String) -> [String] {
        var candidates: [String] = []
        for argument in [ProcessInfo.processInfo.arguments.first, CommandLine.arguments.first] {
            guard let argument, let slash = argument.lastIndex(of: "/") else { continue }
            candidates.append(String(argument[..<slash]) + "/" + name)
        }
        candidates.append(root() + "/.build/debug/" + name)
        return candidates
    }

    /// The built executable `name`, if there is one.
    public static func executable(_ name: String) -> String? {
        executableCandidates(name).first { access($0, X_OK) == 0 }
    }
}
