import Foundation
import Testing
import TestSupport

/// `ringd`'s command line as a newcomer meets it: a wrong argument is one
/// line pointing at --help, and a start says which configuration it read.
@Suite("EndToEnd: ringd command line", .blocking)
struct RingdCommandLineTests {
    static func run(_ arguments: [String], in directory: TemporaryDirectory) throws -> (status: ChildProcess.Termination?, errors: String) {
        let binary = try #require(SignalingIntegration.ringdBinary(), "ringd is not built")
        let errors = directory.file("stderr")
        let process = try ChildProcess(binary, arguments, stdout: .null, stderr: .file(errors))
        let status = process.wait(timeout: 20)
        if status == nil { process.kill() }
        return (status, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    @Test func anUnknownArgumentIsOneLinePointingAtHelp() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (status, errors) = try Self.run(["--port", "9000"], in: directory)
        #expect(status == .exited(2))
        #expect(errors == "ringd: unknown argument \"--port\" (see ringd --help)\n")
    }

    @Test func aBadConfigurationNamesTheFileAndTheStartSaysWhichItRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let config = directory.file("config.json")
        try "{\n  \"listen\": {\"port\": 1,}\n}\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (status, errors) = try Self.run(["--config", config], in: directory)
        #expect(status == .exited(1))
        #expect(errors.contains("\(config):2:24: invalid JSON"), "\(errors)")
        // gen-cert reads the configuration and exits: its log names the file.
        try #"{"store": {"path": "\#(directory.file("data/ringd.sqlite"))"}}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let generated = try Self.run(["gen-cert", "--config", config], in: directory)
        #expect(generated.status == .exited(0), "\(generated.errors)")
        #expect(generated.errors.contains("configuration: \(config)"), "\(generated.errors)")
    }
}
