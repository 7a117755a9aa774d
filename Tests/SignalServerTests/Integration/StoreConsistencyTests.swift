import Dispatch
import SignalProtocol
import SignalReactor
import Synchronization
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

extension SignalingIntegration {
    /// What ringd remembers never differs from what it stored or promised:
    /// a shutdown racing initiates, a commit that fails, and a wall clock
    /// that steps back.
    @Suite("SignalingIntegration: memory agrees with the store", .blocking)
    struct StoreConsistencyTests {
        /// A ringd whose service the test builds (its clock, its store) and can reach.
        final class Rig {
            let directory: TemporaryDirectory
            let store: CallStore
            let service: SignalingService
            let server: TestServer

            init(
                clock: SignalingClock = .system,
                _ adjust: (inout ServerConfig) -> Void = { _ in }
            ) throws {
                let config = testConfig { config in
                    config.requestsPerSecond = 10_000
                    config.requestBurst = 10_000
                    adjust(&config)
                }
                directory = try TemporaryDirectory()
                store = try CallStore(path: directory.file("ringd.sqlite"))
                service = SignalingService(
                    config: config, store: store,
                    tokens: TokenAuthority(secret: Array(repeating: 7, count: 32), revocations: [:]),
                    keys: try AccessKeys(authKeys: config.authKeys, apiKeys: config.apiKeys), clock: clock)
                server = try TestServer(config: config, application: ServiceApplication(service: service))
            }

            var port: Int { server.port }

            func finish() {
                server.stop(timeout: 10)
                directory.remove()
            }
        }

        @Test("initiates racing a shutdown never leave a call live in the store")
        func shutdownRace() throws {
            for round in 0 ..< 20 {
                let directory = try TemporaryDirectory()
                defer { directory.remove() }
                let store = try CallStore(path: directory.file("ringd.sqlite"))
                let config = testConfig { $0.onRestart = .end }
                let service = SignalingService(
                    config: config, store: store,
                    tokens: TokenAuthority(secret: Array(repeating: 7, count: 32), revocations: [:]),
                    keys: try AccessKeys(authKeys: config.authKeys, apiKeys: config.apiKeys))
                let group = try EventLoopGroup(count: 2) { loop in _ = service.register(loop) }
                let initiated = Atomic<Int>(0)
                let stop = Flag()
                let finished = DispatchSemaphore(value: 0)
                for (index, mailbox) in group.mailboxes.enumerated() {
                    mailbox.submit { loop in
                        defer { finished.signal() }
                        guard let signaling = loop.attachment(SignalingLoop.self) else { return }
                        var pair: UInt64 = 0
                        while !stop.isSet {
                            pair += 1
                            let caller = SignalCore.Device(
                                uid: "c\(index)-\(pair)", deviceId: "d",
                                address: DeviceAddress(loop: index, connection: 2 * pair))
                            let callee = SignalCore.Device(
                                uid: "e\(index)-\(pair)", deviceId: "d",
                                address: DeviceAddress(loop: index, connection: 2 * pair + 1))
                            service.connect(caller, requestId: nil, on: signaling)
                            service.connect(callee, requestId: nil, on: signaling)
                            service.handle(
                                .initiateCall(receiverId: callee.uid, callType: .audio, timeout: 60, metadata: nil),
                                id: "i", from: caller, on: signaling)
                            initiated.add(1, ordering: .relaxed)
                        }
                    }
                }
                #expect(waitUntil(timeout: 10) { initiated.load(ordering: .relaxed) >= 200 })
                service.shutdown()
                stop.set()
                finished.wait()
                finished.wait()
                group.stop()
                group.wait()
                store.flush()
                let live = try store.loadLiveCalls()
                store.close()
                #expect(
                    live.count == 0,
                    "round \(round): calls left live after the shutdown, e.g. \(live.first.map(\.sessionId) ?? "")")
                if !live.isEmpty { return }
            }
        }

        @Test("a failed commit leaves no trace: the caller is not busy and no timer runs for the lost call")
        func failedCommit() throws {
            let rig = try Rig()
            defer { rig.finish() }
            let a = try Device.open(port: rig.port, uid: "alice", deviceId: "a1")
            let b = try Device.open(port: rig.port, uid: "bob", deviceId: "b1")
            defer { a.close(); b.close() }

            rig.store.setFaultHook { point in point == .commit ? StoreError(.database, "SQLITE_FULL: injected") : nil }
            let failed = try a.initiate(to: "bob", timeout: 1)
            #expect(failed.code == "ERR_INTERNAL", "\(failed)")
            rig.store.setFaultHook(nil)
            // Requests get ERR_UNAVAILABLE until the calls are rebuilt from the store.
            #expect(waitUntil(timeout: 5) { (try? a.request("getActiveCall"))?.code != "ERR_UNAVAILABLE" })

            #expect(try a.activeCall() == nil, "the call that was not saved is not live")
            #expect(try b.activeCall() == nil)
            let retry = try a.initiate(to: "bob", timeout: 1)
            #expect(retry.ok, "alice is not busy with the lost call: \(retry)")
            guard retry.ok else { return }
            let sessionId = try retry.call().sessionId
            let events = [try b.nextEvent(), try b.nextEvent(timeout: 5)]
            #expect(events.map(\.status) == [.initiated, .unanswered], "\(events)")
            #expect(events.allSatisfy { $0.sessionId == sessionId }, "bob hears of the saved call only: \(events)")
            #expect(try rig.store.loadLiveCalls().isEmpty)
            // The lost call's ring timer (due before this one's) left nothing in the store.
            let logs = logEntries(try b.logs().data)
            #expect(logs.compactMap { $0["sessionId"]?.stringValue } == [sessionId], "\(logs)")
        }

        @Test("a wall clock that steps back does not stop a ring timeout")
        func clockStepsBack() throws {
            let offset = Atomic<Int64>(0)
            let rig = try Rig(
                clock: SignalingClock(
                    wall: { WallClock.milliseconds() + offset.load(ordering: .relaxed) },
                    monotonic: SignalingClock.system.monotonic))
            defer { rig.finish() }
            let a = try Device.open(port: rig.port, uid: "alice", deviceId: "a1")
            let b = try Device.open(port: rig.port, uid: "bob", deviceId: "b1")
            defer { a.close(); b.close() }
            let call = try a.initiate(to: "bob", timeout: 1).call()
            #expect(try b.nextEvent().status == .initiated)
            offset.store(-60_000, ordering: .relaxed)
            let ended = try b.waitForEvent(call.sessionId, .unanswered, timeout: 5)
            #expect(ended.endReason == .timeout)
            #expect(try a.activeCall() == nil)
        }
    }
}

/// A ringd application around a service the test made.
struct ServiceApplication: ServerApplication {
    let service: SignalingService

    func makeRouter(_ context: ServerContext) -> HTTPRouter { RingdRouter(context: context, service: service) }
    func stop() { service.shutdown() }
    func close() { service.backend.embeddedStore?.close() }
}
