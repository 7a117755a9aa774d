import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// One ringd per store and per port: a second one exits at once with one
    /// line saying why, and the first goes on serving.
    @Suite("SignalingIntegration: one ringd per store and port", .blocking)
    struct SingleInstanceTests {
        /// Runs a second ringd that must refuse to start; returns its stderr.
        private func refusedStart(
            _ binary: String, in directory: TemporaryDirectory,
            _ environment: [String: String]
        ) throws -> String {
            let configPath = directory.file("second.json")
            let logPath = directory.file("second.log")
            try Data("{}".utf8).write(to: URL(fileURLWithPath: configPath))
            var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RINGD_") }
            merged.merge(environment) { $1 }
            let second = try ChildProcess(
                binary, ["--config", configPath], environment: merged,
                stdout: .null, stderr: .file(logPath))
            let ended = second.wait(timeout: 15)
            #expect(ended == .exited(1), "the second ringd: \(String(describing: ended))")
            return (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        }

        @Test("a second ringd on the same store exits naming the store and the pid holding it")
        func sameStore() throws {
            let binary = try #require(ringdBinary(), "no ringd executable among \(ringdCandidates())")
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let first = try RingdProcess(binary: binary, directory: directory.path)
            defer { first.stop() }
            let store = directory.path + "/ringd.sqlite"
            let log = try refusedStart(binary, in: directory, ["RINGD_STORE_PATH": store, "RINGD_LISTEN_PORT": "0"])
            #expect(
                log == "ringd: cannot start: STORE_IN_USE: \(store) is in use by another ringd (pid \(first.pid))\n")
            #expect(first.isRunning)
            let device = try Device.open(port: first.port, uid: "alice", deviceId: "a1")
            #expect(try device.activeCall() == nil, "the first ringd still serves")
            device.close()
        }

        @Test("a second ringd on the same port exits with address … already in use")
        func samePort() throws {
            let binary = try #require(ringdBinary(), "no ringd executable among \(ringdCandidates())")
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let first = try RingdProcess(binary: binary, directory: directory.path)
            defer { first.stop() }
            let log = try refusedStart(
                binary, in: directory,
                [
                    "RINGD_STORE_PATH": directory.file("other/ringd.sqlite"),
                    "RINGD_LISTEN_PORT": String(first.port),
                ])
            #expect(log == "ringd: cannot start: address 127.0.0.1:\(first.port) already in use\n")
            #expect(first.isRunning)
        }

        @Test("the store is free again once its ringd is killed (-9)")
        func lockDiesWithTheProcess() throws {
            let binary = try #require(ringdBinary(), "no ringd executable among \(ringdCandidates())")
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let first = try RingdProcess(binary: binary, directory: directory.path)
            first.stop()
            let second = try RingdProcess(binary: binary, directory: directory.path)
            defer { second.stop() }
            #expect(second.isRunning)
        }
    }
}
