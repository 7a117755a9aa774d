import Dispatch
import Synchronization
import TestSupport
import Testing

@testable import SignalReactor

/// ``EventLoop/atTickEnd(_:)``: once per registration, after the work of the
/// pass that registered it, and again for actions registered by those actions.
@Suite(.blocking) struct EventLoopTickTests {
    @Test func tickEndActionsRunAfterThePassInOrder() throws {
        let order = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let group = try EventLoopGroup(count: 1) { _ in }
        defer {
            group.stop()
            group.wait()
        }
        group.mailboxes[0].submit { loop in
            loop.atTickEnd {
                order.withLock { $0.append("end 1") }
                loop.atTickEnd {
                    order.withLock { $0.append("nested") }
                    done.signal()
                }
            }
            loop.atTickEnd { order.withLock { $0.append("end 2") } }
            order.withLock { $0.append("task") }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(order.withLock { $0 } == ["task", "end 1", "end 2", "nested"])
    }
}
