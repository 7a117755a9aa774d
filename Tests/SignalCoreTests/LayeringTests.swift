import Foundation
import TestSupport
import Testing

/// The layers the package promises and the compiler alone does not hold:
/// a target's dependencies in Package.swift can grow, so this reads every
/// `import` of the pure targets. SignalCore may use the protocol, the system
/// layer's values (``Deadline``, random bytes) and Foundation or
/// Synchronization; SignalProtocol nothing at all, not even Glibc, so that
/// a client or a fuzzer can take it alone. RingKit builds for Apple
/// platforms too: the protocol, Foundation and Synchronization, and
/// SignalClient (epoll, Glibc) only in its Linux transport.
@Suite struct LayeringTests {
    static let allowed: [String: Set<String>] = [
        "Sources/SignalCore": ["SignalProtocol", "SignalSystem", "Foundation", "Synchronization"],
        "Sources/Protocol": [],
        "Sources/RingKit": ["SignalProtocol", "Foundation", "FoundationNetworking", "Synchronization", "SignalClient"],
    ]

    @Test(arguments: allowed.keys.sorted())
    func importsStayInTheirLayer(_ folder: String) throws {
        let (files, imports) = try Self.imports(under: Repository.root() + "/" + folder)
        #expect(files > 10, "only \(files) Swift files under \(folder): the path moved?")
        let allowed = Self.allowed[folder] ?? []
        let forbidden = imports.filter { !allowed.contains($0.module) }
        #expect(forbidden.isEmpty, "\(folder) imports \(forbidden.map { "\($0.module) (\($0.file))" })")
    }

    @Test func ringKitTakesSignalClientOnlyInItsLinuxTransport() throws {
        let folder = Repository.root() + "/Sources/RingKit"
        let (_, imports) = try Self.imports(under: folder)
        #expect(imports.filter { $0.module == "SignalClient" }.map(\.file) == ["ReactorTransport.swift"])
        let transport = try String(contentsOfFile: folder + "/ReactorTransport.swift", encoding: .utf8)
        #expect(transport.hasPrefix("#if os(Linux)\n"), "the reactor transport is compiled on Linux only")
    }

    @Test func readsEveryFormOfImport() {
        let lines = [
            "import Foo", "    import Glibc", "@testable import Bar", "@_exported import Baz",
            "import struct Qux.Thing", "// import Commented", "let important = 1",
        ]
        #expect(lines.compactMap(Self.importedModule) == ["Foo", "Glibc", "Bar", "Baz", "Qux"])
    }

    /// How many Swift files `directory` holds, and every import in them with its file.
    static func imports(under directory: String) throws -> (files: Int, imports: [(module: String, file: String)]) {
        let files = FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? []
        let swiftFiles = files.filter { $0.hasSuffix(".swift") }.sorted()
        var found: [(module: String, file: String)] = []
        for file in swiftFiles {
            let text = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                if let module = importedModule(String(line)) { found.append((module, file)) }
            }
        }
        return (swiftFiles.count, found)
    }

    /// The module a line imports, if it is an import declaration: attributes
    /// (`@testable`) and a kind (`import struct M.T`) allowed, and indented
    /// ones in `#if canImport` blocks included.
    static func importedModule(_ line: String) -> String? {
        var words = line.split(separator: " ").map(String.init)[...]
        while let first = words.first, first.hasPrefix("@") { words = words.dropFirst() }
        guard words.first == "import" else { return nil }
        words = words.dropFirst()
        let kinds: Set = ["struct", "class", "enum", "protocol", "typealias", "func", "let", "var", "actor"]
        if let kind = words.first, kinds.contains(kind) { words = words.dropFirst() }
        guard let path = words.first else { return nil }
        return String(path.prefix { $0 != "." })
    }
}
