import Foundation
import TestSupport
import Testing

/// The systemd units in deploy/systemd/ as systemd itself reads them.
@Suite(.blocking) struct DeployUnitTests {
    private static let units = ["ringd.service", "ringd.socket", "ringd-tls.socket"]
    private static let analyze = "/usr/bin/systemd-analyze"
    /// Where the units expect the binary; verify needs it to exist.
    private static let installedBinary = "/usr/local/bin/ringd"

    /// `systemd-analyze verify` warns about unknown keys with status 0, so
    /// any output at all counts as a complaint.
    @Test func unitsPassSystemdAnalyzeVerify() throws {
        let ringd = try #require(
            Repository.executable("ringd"),
            "no ringd executable among \(Repository.executableCandidates("ringd"))")
        let directory = try TemporaryDirectory(prefix: "ringd-units")
        defer { directory.remove() }
        for unit in Self.units {
            let text = try String(contentsOfFile: Self.unitPath(unit), encoding: .utf8)
            let patched = text.replacingOccurrences(of: Self.installedBinary, with: ringd)
            try patched.write(toFile: directory.file(unit), atomically: true, encoding: .utf8)
        }
        let result = try Self.run(["verify"] + Self.units.map(directory.file))
        #expect(
            result.status == 0 && result.output.isEmpty,
            "systemd-analyze verify (status \(result.status)):\n\(result.output)")
    }

    /// docs/DEPLOY.md records 1.2; a unit that loses its hardening scores higher.
    @Test func serviceExposureStaysLow() throws {
        let result = try Self.run(["security", "--offline=yes", Self.unitPath("ringd.service")])
        let line = try #require(
            result.output.split(separator: "\n").first { $0.contains("Overall exposure level") },
            "no exposure level in:\n\(result.output)")
        let score = try #require(
            line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) },
            "no score in \(line)")
        #expect(score <= 1.5, "\(line)")
    }

    private static func unitPath(_ unit: String) -> String {
        Repository.root() + "/deploy/systemd/" + unit
    }

    private static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try Command.run(analyze, arguments)
    }
}
