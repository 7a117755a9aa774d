import Foundation
import SignalProtocol
import TestSupport
import Testing

/// A checking script run by the virtual environment `make venv` makes (and
/// `make test` runs first), with an implementation that is not ringd's:
/// it reads one JSON object on stdin and prints a line per check.
enum PythonCheck {
    static let python = Repository.root() + "/.venv/bin/python"

    /// Runs `script` (a path from the repository's root) on `input` and
    /// expects it to exit 0 having printed exactly `lines`; `what` names
    /// what the virtual environment must hold, for the message when it is missing.
    static func expect(
        _ script: String, input: JSONValue, prints lines: [String], needing what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "\(python) is missing: run `make venv` (or `make test`, which runs it) to install \(what)",
            sourceLocation: sourceLocation)
        let directory = try TemporaryDirectory(prefix: "ringd-python-check")
        defer { directory.remove() }
        let errors = directory.file("stderr")
        let child = try ChildProcess(
            python, ["-I", Repository.root() + "/" + script], stdin: .pipe, stdout: .pipe, stderr: .file(errors))
        try child.standardInput?.write(contentsOf: Data(input.serialized.utf8))
        try child.standardInput?.close()
        // A few hundred bytes of output: the pipe never fills, so waiting
        // for the exit before reading cannot deadlock.
        let termination = child.wait(timeout: 60)
        let output = String(decoding: child.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(termination == .exited(0), "stdout:\n\(output)\nstderr:\n\(stderr)", sourceLocation: sourceLocation)
        let printed = output.split(separator: "\n").map(String.init)
        #expect(printed == lines, "stderr:\n\(stderr)", sourceLocation: sourceLocation)
    }
}
