import Foundation
import Testing

/// The coordinator is the portable part: its files import the wire types
/// and nothing else (no Foundation, no Apple framework), so it builds and
/// is tested anywhere. Only the files under Apple/ import CallKit, PushKit
/// and RingKit, and every one of them is compiled out where CXProvider is
/// missing.
@Suite struct PortabilityTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/RingCallKit")

    @Test func theCoordinatorImportsOnlyTheWireTypes() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path)
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count >= 5, "only \(files) under Sources/RingCallKit: the path moved?")
        for file in files {
            let imports = try Self.lines(of: Self.folder.appendingPathComponent(file))
                .filter { $0.hasPrefix("import ") }
            #expect(imports.allSatisfy { $0 == "import SignalProtocol" }, "\(file): \(imports)")
        }
    }

    @Test func theAppleAdaptersAreCompiledOutWithoutCallKit() throws {
        let apple = Self.folder.appendingPathComponent("Apple")
        let files = try FileManager.default.contentsOfDirectory(atPath: apple.path).filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty)
        for file in files {
            let code = try Self.lines(of: apple.appendingPathComponent(file)).filter { !$0.hasPrefix("//") }
            #expect(code.first == "#if canImport(CallKit) && canImport(PushKit) && !os(macOS)", "\(file)")
            #expect(code.last == "#endif", "\(file)")
        }
    }

    static func lines(of url: URL) throws -> [String] {
        try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
    }
}
