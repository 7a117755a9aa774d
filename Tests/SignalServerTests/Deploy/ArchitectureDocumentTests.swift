import Foundation
import TestSupport
import Testing

/// docs/ARCHITECTURE.md stays true about the files it names: every
/// `Folder/File.swift` it cites exists under `Sources/` (or, when it starts
/// with `Tests/`, in the repository), and every bare `File.swift` exists
/// somewhere in `Sources/` or `Tests/`.
@Suite(.blocking) struct ArchitectureDocumentTests {
    static let root = Repository.root()

    /// Every `….swift` between backticks in the document.
    static func citedFiles() throws -> [String] {
        let text = try String(contentsOfFile: root + "/docs/ARCHITECTURE.md", encoding: .utf8)
        var cited: [String] = []
        for span in text.split(separator: "`", omittingEmptySubsequences: false).enumerated() where span.offset % 2 == 1
        {
            let name = span.element
            guard name.hasSuffix(".swift"), !name.contains(" ") else { continue }
            cited.append(String(name))
        }
        return cited
    }

    /// Every Swift file's path under `directories`, relative to the root.
    static func swiftFiles(under directories: [String]) -> [String] {
        directories.flatMap { directory -> [String] in
            let enumerator = FileManager.default.enumerator(atPath: root + "/" + directory)
            return (enumerator?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
                .map { directory + "/" + $0 }
        }
    }

    @Test func everyFileTheDocumentNamesExists() throws {
        let cited = try Self.citedFiles()
        #expect(cited.count > 50, "the document cites its files")
        let files = Self.swiftFiles(under: ["Sources", "Tests", "examples", "Fuzz"])
        let names = Set(files.map { $0.split(separator: "/").last.map(String.init) ?? $0 })
        let missing = Set(cited).sorted().filter { path in
            // A pattern (`CallStateMachine*.swift`, `+<Topic>.swift`) names no one file.
            if path.contains("*") || path.contains("<") { return false }
            if FileManager.default.fileExists(atPath: Self.root + "/" + path) { return false }
            if path.contains("/") { return !files.contains { $0 == "Sources/" + path || $0.hasSuffix("/" + path) } }
            return !names.contains(path)
        }
        #expect(missing.isEmpty, "docs/ARCHITECTURE.md names files that do not exist: \(missing)")
    }
}
