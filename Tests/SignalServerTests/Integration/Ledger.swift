import Foundation
import SignalProtocol
import SignalServer
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// What the clients of a burst were told: sessionId → every status heard
    /// (results and events), plus failures seen before the crash.
    final class Ledger: Sendable {
        private let told = Mutex<[String: [String]]>([:])
        private let failures = Mutex<[String]>([])
        private let done = Atomic<Int>(0)
        private let exited = Atomic<Int>(0)
        let crashed = Flag()

        func record(_ call: Snapshot) {
            told.withLock { $0[call.sessionId, default: []].append(call.status.rawValue) }
        }

        func completed() { done.add(1, ordering: .relaxed) }
        func workerExited() { exited.add(1, ordering: .relaxed) }

        /// A failure is only one if it happened before the crash.
        func failed(_ message: String) {
            if !crashed.isSet { failures.withLock { $0.append(message) } }
        }

        var completedCount: Int { done.load(ordering: .relaxed) }
        var exitedCount: Int { exited.load(ordering: .relaxed) }
        var statuses: [String: [String]] { told.withLock { $0 } }
        var failureList: [String] { failures.withLock { $0 } }
    }
}
