import SignalClient
import Synchronization

/// Something a call or answer session reacts to.
enum Input: Sendable {
    /// An event from the connection to ringd.
    case client(ClientEvent)
    /// The first SIGINT, SIGTERM or SIGHUP.
    case stop
    /// The action of a key press or typed line.
    case key(CallAction)
    /// An action planned for one call (by `--auto-accept`, `--hangup-after`, …).
    case scheduled(CallAction, sessionId: String)
    /// A second passed (refreshes the ringing line).
    case tick
}

/// The one queue of a session: every source (client events, signals, the
/// keyboard, timers) posts here, and the session takes the inputs one at a
/// time, in order, so its state needs no lock.
final class Inbox: Sendable {
    /// The inputs, for the session's single loop.
    let inputs: AsyncStream<Input>
    /// The posting end of `inputs`.
    private let continuation: AsyncStream<Input>.Continuation

    /// An empty inbox.
    init() {
        (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
    }

    /// Queues `input`.
    func post(_ input: Input) {
        continuation.yield(input)
    }

    /// Queues `input` after `seconds`.
    func post(_ input: Input, after seconds: Double) {
        guard seconds > 0 else { return post(input) }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            post(input)
        }
    }

    /// Queues every event of `client`.
    func forward(_ client: SignalClient) {
        Task {
            for await event in client.events { post(.client(event)) }
        }
    }

    /// Queues a tick every second.
    func tickEverySecond() {
        Task {
            while true {
                try? await Task.sleep(for: .seconds(1))
                post(.tick)
            }
        }
    }
}

/// Runs `work` but waits at most `seconds` for it; nil if it did not finish
/// in time (it then goes on in the background, unwatched). When the work
/// finishes first, the timer is cancelled rather than left to run out.
func bounded<Value: Sendable>(
    seconds: Double,
    _ work: @escaping @Sendable () async throws(ClientError) -> Value
) async -> Result<Value, ClientError>? {
    await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, ClientError>?, Never>) in
        let once = ResumeOnce(continuation)
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            guard !Task.isCancelled else { return }
            once.resume(nil)
        }
        Task {
            let result: Result<Value, ClientError>
            do throws(ClientError) {
                result = .success(try await work())
            } catch {
                result = .failure(error)
            }
            timer.cancel()
            once.resume(result)
        }
    }
}

/// Resumes a continuation with the first value offered and drops the rest.
private final class ResumeOnce<Value: Sendable>: Sendable {
    /// The continuation until it is resumed, then nil.
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes with `value` if nothing resumed it yet.
    func resume(_ value: Value) {
        continuation.withLock { pending in
            defer { pending = nil }
            return pending
        }?.resume(returning: value)
    }
}
