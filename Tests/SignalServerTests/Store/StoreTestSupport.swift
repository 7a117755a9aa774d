import Foundation
import SignalProtocol
import Synchronization
import TestSupport

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// A failure of the store test harness itself (a timeout, a temp directory).
struct StoreTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension TemporaryDirectory {
    /// The path of a database file in the directory.
    var databasePath: String { file("calls.db") }
}

/// Where a test's store lives: a file in a temporary directory, or memory
/// (``CallStore/inMemoryPath``, as `ringd --ephemeral` keeps it), for the
/// cases both must pass.
enum StoreLocation: String, CaseIterable, Sendable {
    case file, memory
}

/// A store at a ``StoreLocation``; ``close()`` closes it and removes its directory.
final class TestStore {
    let store: CallStore
    private let directory: TemporaryDirectory?

    init(_ location: StoreLocation) throws {
        switch location {
        case .file:
            let directory = try TemporaryDirectory()
            self.directory = directory
            do {
                store = try CallStore(path: directory.databasePath)
            } catch {
                directory.remove()
                throw error
            }
        case .memory:
            directory = nil
            store = try CallStore(path: CallStore.inMemoryPath)
        }
    }

    func close() {
        store.close()
        directory?.remove()
    }
}

/// How long a test waits for any one store completion.
let storeTestTimeout: Double = 20

/// Starts an asynchronous store operation and waits, at most
/// ``storeTestTimeout`` seconds, for its completion.
func waitForResult<Value: Sendable>(
    _ start: (@escaping @Sendable (Result<Value, StoreError>) -> Void) -> Void
) throws -> Result<Value, StoreError> {
    let outcome = Mutex<Result<Value, StoreError>?>(nil)
    let done = DispatchSemaphore(value: 0)
    start { result in
        outcome.withLock { $0 = result }
        done.signal()
    }
    guard done.wait(timeout: .now() + storeTestTimeout) == .success, let result = outcome.withLock({ $0 }) else {
        throw StoreTestFailure("no completion within \(storeTestTimeout) s")
    }
    return result
}

/// Counts completions from many threads and waits for all of them.
final class CompletionCounter: Sendable {
    private let remaining: DispatchSemaphore = DispatchSemaphore(value: 0)

    func signal() { remaining.signal() }

    /// Waits until `count` completions arrived; false on timeout.
    func wait(for count: Int) -> Bool {
        let deadline = DispatchTime.now() + storeTestTimeout
        for _ in 0 ..< count {
            guard remaining.wait(timeout: deadline) == .success else { return false }
        }
        return true
    }
}

/// Parks the store's writer thread inside a completion until ``release()``,
/// so that every job queued meanwhile is run as one batch.
final class WriterGate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)

    /// Returns once the writer is parked.
    init(_ store: CallStore) throws {
        store.call(sessionId: "") { [entered, gate] _ in
            entered.signal()
            gate.wait()
        }
        guard entered.wait(timeout: .now() + storeTestTimeout) == .success else {
            throw StoreTestFailure("the writer did not reach the gate")
        }
    }

    func release() { gate.signal() }
}

/// Blocking conveniences for tests.
extension CallStore {
    /// Commits `calls` as changes creating them (the store writes a change's
    /// `after`, inserting or replacing by session id), for tests that think
    /// in snapshots.
    func save(
        _ calls: [Call], wakeWriter: Bool = true,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        commit(calls.map { CallChange.created($0, by: .server) }, wakeWriter: wakeWriter, completion: completion)
    }

    func saveAndWait(_ calls: [Call]) throws {
        try waitForResult { save(calls, completion: $0) }.get()
    }

    func logs(_ uid: String, _ query: CallLogFilter = CallLogFilter()) throws -> CallLogPage {
        try waitForResult { callLogs(for: uid, query: query, completion: $0) }.get()
    }

    func fetch(_ sessionId: String) throws -> Call? {
        try waitForResult { call(sessionId: sessionId, completion: $0) }.get()
    }

    /// Every page of `uid`'s history for `query`, concatenated.
    func allLogs(_ uid: String, _ query: CallLogFilter) throws -> [CallLog] {
        try everyPage(from: query) { try logs(uid, $0) }
    }
}

/// Every page `page` answers, from `query` on through each `next`, concatenated.
func everyPage(from query: CallLogFilter, _ page: (CallLogFilter) throws -> CallLogPage) throws -> [CallLog] {
    var query = query
    var logs: [CallLog] = []
    while true {
        let answer = try page(query)
        logs += answer.logs
        guard let next = answer.next else { return logs }
        query.cursor = next
    }
}

/// A terminal call number `index` from `initiator` to `receiver`, its times
/// derived from `index`.
func storedCall(
    _ index: Int, _ initiator: String = "alice", _ receiver: String = "bob",
    type: CallType = .audio, status: CallStatus = .ended
) -> Call {
    let start = 1_700_000_000_000 + Int64(index) * 1000
    let answered = status == .ended || status == .ongoing
    return Call(
        sessionId: "session-\(index)", callType: type, status: status, initiator: initiator,
        receiver: receiver, initiatedAt: start, acceptedAt: answered ? start + 100 : nil,
        endedAt: status.isTerminal ? start + 500 : nil, acceptedBy: answered ? "\(receiver)-phone" : nil,
        endedBy: status.isTerminal ? initiator : nil, endReason: endReason(for: status), timeoutMs: 30_000)
}

/// The end reason a call that reached `status` normally has.
private func endReason(for status: CallStatus) -> EndReason? {
    switch status {
    case .initiated, .ongoing: return nil
    case .ended: return .hangup
    case .rejected: return .rejected
    case .busy: return .busy
    case .cancelled: return .cancelled
    case .unanswered: return .timeout
    }
}
