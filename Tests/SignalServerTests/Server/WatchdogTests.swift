import Dispatch
import TestSupport
import Testing

@testable import SignalServer

/// The watchdog pings only while every event loop runs what it is handed.
@Suite(.blocking) struct WatchdogTests {
    @Test func aStuckLoopStopsThePingsUntilItRunsAgain() throws {
        let server = try TestServer(config: testConfig { $0.threads = 2 })
        defer { server.stop() }
        let watchdog = Watchdog(server: server.server, interval: 60)
        #expect(waitUntil(timeout: 5) { watchdog.ping() }, "two idle loops answer")

        // Stands in for a loop stuck in a bug: loop 1 blocks on the gate.
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        server.server.onEveryLoop { loop in
            if loop.index == 1 { gate.wait() }
        }
        // This round may still have been answered before the gate; the one
        // it asks for next is queued behind the gate, so the next ping fails.
        watchdog.ping()
        #expect(!watchdog.ping(), "loop 1 cannot have answered")
        #expect(!watchdog.ping())

        gate.signal()
        #expect(waitUntil(timeout: 5) { watchdog.ping() }, "loop 1 runs again")
    }
}
