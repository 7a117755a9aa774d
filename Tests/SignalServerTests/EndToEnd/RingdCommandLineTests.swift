import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// `ringd`'s command line as a newcomer meets it: a wrong argument is one
/// line pointing at --help, and a start says which configuration it read.
@Suite("EndToEnd: ringd command line", .blocking)
struct RingdCommandLineTests {
    /// Runs ringd with `arguments` from `directory`, its stderr in a file there.
    static func run(_ arguments: [String], in directory: TemporaryDirectory) throws -> (status: ChildProcess.Termination?, errors: String) {
        let binary = try #require(SignalingIntegration.ringdBinary(), "ringd is not built")
        let errors = directory.file("stderr")
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RINGD_") }
        let process = try ChildProcess(binary, arguments, environment: environment, directory: directory.path,
                                       stdout: .null, stderr: .file(errors))
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

    @Test func withoutAConfigurationFileOnlyAnEphemeralStartProceeds() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (status, errors) = try Self.run([], in: directory)
        #expect(status == .exited(1))
        #expect(errors.hasPrefix("ringd: no configuration file: neither config.json nor /etc/ringd/config.json exists")
                    && errors.contains("--ephemeral"), "\(errors)")
    }

    /// gen-cert writes into the data directory, which a store in memory does not have.
    @Test func genCertRefusesAStoreInMemory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (status, errors) = try Self.run(["gen-cert", "--ephemeral"], in: directory)
        #expect(status == .exited(2))
        #expect(errors == "ringd: gen-cert writes into the data directory, and --ephemeral keeps no data directory (see ringd --help)\n")
        let config = directory.file("config.json")
        try #"{"store": {"path": ":memory:"}}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let (fromConfig, configErrors) = try Self.run(["gen-cert", "--config", config], in: directory)
        #expect(fromConfig == .exited(1))
        #expect(configErrors.contains("store.path is \":memory:\", an in-memory store"), "\(configErrors)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == ["config.json", "stderr"])
    }

    @Test func aBadConfigurationIsPlacedAndAStartNamesTheFileItRead() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let config = directory.file("config.json")
        try "{\n  \"listen\": {\"port\": 1,}\n}\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (status, errors) = try Self.run(["--config", config], in: directory)
        #expect(status == .exited(1))
        #expect(errors.contains("\(config):2:24: invalid JSON"), "\(errors)")
        try #"{"listen": {"port": 0}, "store": {"path": "\#(directory.file("data/ringd.sqlite"))"}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let binary = try #require(SignalingIntegration.ringdBinary(), "ringd is not built")
        let log = directory.file("ringd.log")
        let ringd = try ChildProcess(binary, ["--config", config], stdout: .null, stderr: .file(log))
        defer {
            ringd.signal(SIGTERM)
            if ringd.wait(timeout: 10) == nil { ringd.kill() }
        }
        let read = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        #expect(waitUntil(timeout: 15) { read().contains("listening on") }, "\(read())")
        #expect(read().contains("configuration \(config)"), "the start names the file it read: \(read())")
    }
}
