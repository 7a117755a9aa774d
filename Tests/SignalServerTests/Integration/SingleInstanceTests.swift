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
        private func refusedStart(in directory: TemporaryDirectory, _ environment: [String: String]) throws -> String {
            let configPath = directory.file("second.json")
            let logPath = directory.file("second.log")
            try Data("{}".utf8).write(to: URL(fileURLWithPath: configPath))
            let ended = try RingdProcess.run(
                ["--config", configPath], environment: environment, stderr: .file(logPath), timeout: 15)
            #expect(ended == .exited(1), "the second ringd: \(String(describing: ended))")
            return (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        }

        @Test("a second ringd on the same store exits naming the store and the pid holding it")
        func sameStore() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            try withRingd(directory: directory.path) { first in
                let store = directory.path + "/ringd.sqlite"
                let log = try refusedStart(in: directory, ["RINGD_STORE_PATH": store, "RINGD_LISTEN_PORT": "0"])
                #expect(
                    log == "ringd: cannot start: STORE_IN_USE: \(store) is in use by another ringd (pid \(first.pid))\n"
                )
                #expect(first.isRunning)
                let device = try Device.open(port: first.port, uid: "alice", deviceId: "a1")
                #expect(try device.activeCall() == nil, "the first ringd still serves")
                device.close()
            }
        }

        @Test("a second ringd on the same port exits with address … already in use")
        func samePort() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            try withRingd(directory: directory.path) { first in
                let log = try refusedStart(
                    in: directory,
                    [
                        "RINGD_STORE_PATH": directory.file("other/ringd.sqlite"),
                        "RINGD_LISTEN_PORT": String(first.port),
                    ])
                #expect(log == "ringd: cannot start: address 127.0.0.1:\(first.port) already in use\n")
                #expect(first.isRunning)
            }
        }

        @Test("the store is free again once its ringd is killed (-9)")
        func lockDiesWithTheProcess() throws {
            try withRingd { ringd in
                ringd.kill()
                try ringd.restart(samePort: false)
                #expect(ringd.isRunning)
            }
        }
    }
}
