import CCurl
import SignalSystem
import Synchronization

/// The hand-off between any thread and the curl thread: requests not yet
/// taken, whether the client closed, and the multi handle to wake. The
/// multi handle is set while the curl thread runs and is woken only under
/// the lock, so no wake-up can reach a handle the thread has cleaned up.
final class OutboundQueue: Sendable {
    /// A request as handed over, with its completion and when it came.
    struct Pending: Sendable {
        let request: OutboundRequest
        let completion: @Sendable (OutboundResponse) -> Void
        let queuedAt: Deadline
    }

    /// The `CURLM *` as other threads may use it: only to wake it, which
    /// libcurl allows from any thread (`curl_multi_wakeup`), and only under
    /// the lock while the curl thread has it set.
    private struct WakeHandle: @unchecked Sendable {
        let multi: UnsafeMutableRawPointer
        func wake() { _ = curl_multi_wakeup(multi) }
    }

    private struct State {
        var pending: [Pending] = []
        var closed = false
        /// Set while the curl thread runs.
        var wakeHandle: WakeHandle?
    }

    private let state = Mutex(State())

    /// Queues `pending` and wakes the curl thread; false once closed.
    func submit(_ pending: Pending) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.pending.append(pending)
            state.wakeHandle?.wake()
            return true
        }
    }

    /// Marks the queue closed and wakes the curl thread; false if it already was.
    func close() -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.closed = true
            state.wakeHandle?.wake()
            return true
        }
    }

    /// Everything queued so far, and whether the queue is closed (no more
    /// will come once it is).
    func take() -> (pending: [Pending], closed: Bool) {
        state.withLock { state in
            defer { state.pending = [] }
            return (state.pending, state.closed)
        }
    }

    /// The curl thread's multi handle, to wake; nil when it stops.
    func setMulti(_ multi: UnsafeMutableRawPointer?) {
        let handle = multi.map(WakeHandle.init)
        state.withLock { state in
            state.wakeHandle = handle
        }
    }
}
