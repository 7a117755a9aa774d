import Foundation
import Testing

/// docs/IOS.md's failure table and CoordinatorTableTests name the same
/// rows: a case documented and not tested, or tested and not documented,
/// fails here.
@Suite struct CoordinatorDocumentTests {
    @Test func theFailureTableNamesEveryRowAndOnlyThem() throws {
        let documented = try Self.failureTableCases()
        let tested = CoordinatorTableTests.rows.map(\.name)
        #expect(documented.count > 20, "the table was not found whole: \(documented)")
        #expect(documented == tested, "docs/IOS.md's rows, in order, are the tests' rows")
    }

    /// The first column of the table under "Failure cases, as tested".
    static func failureTableCases() throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/IOS.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let heading = lines.firstIndex(where: { $0.hasPrefix("## ") && $0.contains("Failure cases") })
        else { return [] }
        var cases: [String] = []
        for line in lines[(heading + 1)...] {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("| "), !line.hasPrefix("|---") else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            if let first = cells.first, first != "case" { cases.append(first) }
        }
        return cases
    }
}
