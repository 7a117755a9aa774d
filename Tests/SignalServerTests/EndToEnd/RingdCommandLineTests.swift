import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ringd`'s command line as a newcomer meets it: a wrong argument is one
/// line pointing at --help, and a start says which configuration it read.
@Suite("EndToEnd: ringd command line", .blocking)
struct RingdCommandLineTests {
    /// Runs ringd with `arguments` from `directory`, its stderr in a file there.
    static func run(
        _ arguments: [String], in directory: TemporaryDirectory
    ) throws -> (status: ChildProcess.Termination?, errors: String) {
        let errors = directory.file("stderr")
        let status = try RingdProcess.run(arguments, directory: directory.path, stderr: .file(errors))
        return (status, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    /// `ringd states` prints the table without reading a configuration: an
    /// unknown RINGD_ variable, which stops any start, does not stop it, and
    /// the store it names is not created.
    @Test func statesPrintsTheTableWithoutAConfigurationOrAStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("data/ringd.sqlite")
        var environment = ProcessInfo.processInfo.environment
        environment["RINGD_NO_SUCH_KEY"] = "1"
        environment["RINGD_STORE_PATH"] = store
        func states(_ arguments: [String], into name: String) throws -> (ChildProcess.Termination?, String) {
            let output = directory.file(name)
            let status = try RingdProcess.run(
                ["states"] + arguments, replacing: environment, stdout: .file(output),
                stderr: .file(directory.file("stderr")))
            return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
        }

        let (jsonStatus, json) = try states(["--format", "json"], into: "states.json")
        #expect(jsonStatus == .exited(0))
        guard case .array(let rows) = try JSONValue.parse(json) else {
            Issue.record("ringd states --format json printed no JSON array: \(json.prefix(200))")
            return
        }
        #expect(rows.count > 100)
        #expect(rows.allSatisfy { $0["state"]?.stringValue != nil && $0["next"]?.stringValue != nil })
        let ringing = rows.first {
            $0["state"] == .string("initiated") && $0["input"] == .string("acceptCall")
                && $0["actor"] == .string("callee")
        }
        #expect(ringing?["next"] == .string("ongoing"))

        let (markdownStatus, markdown) = try states([], into: "states.md")
        #expect(markdownStatus == .exited(0))
        let document = try String(contentsOfFile: Repository.root() + "/docs/STATES.md", encoding: .utf8)
        #expect(markdown == document, "ringd states prints docs/STATES.md")
        #expect(access(store, F_OK) != 0, "ringd states created the store")

        let (badStatus, _) = try states(["--format", "yaml"], into: "bad")
        #expect(badStatus == .exited(2))
        let errors = (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? ""
        #expect(errors.hasSuffix("ringd: --format needs markdown or json (see ringd --help)\n"), "\(errors)")
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
        #expect(
            errors.hasPrefix("ringd: no configuration file: neither config.json nor /etc/ringd/config.json exists")
                && errors.contains("--ephemeral"), "\(errors)")
    }

    /// gen-cert writes into the data directory, which a store in memory does not have.
    @Test func genCertRefusesAStoreInMemory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (status, errors) = try Self.run(["gen-cert", "--ephemeral"], in: directory)
        #expect(status == .exited(2))
        #expect(
            errors
                == "ringd: gen-cert writes into the data directory, and --ephemeral keeps no data directory (see ringd --help)\n"
        )
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
        let binary = try RingdProcess.binary()
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
