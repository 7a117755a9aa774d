import Dispatch
import SignalReactor
import SignalSystem

/// The one I/O thread of the client library: every socket of every client
/// in the process, with its timers (connect and request deadlines,
/// keep-alive, close linger, reconnect backoff), lives on this event loop,
/// and async calls are completed from it. So the library never holds a
/// thread of Swift's cooperative pool while it waits, and nothing it does
/// waits for one.
///
/// Name resolution may block (DNS), so it runs on a serial queue of its
/// own and hands the addresses to the loop.
enum ClientIO {
    /// The loop's mailbox, started on first use; the failure when the
    /// process could not get an epoll descriptor, an eventfd or a thread,
    /// which every connect then reports.
    private static let started: Result<LoopMailbox, ClientError> = {
        do {
            return .success(try EventLoopGroup(count: 1, name: "ringd-client-io") { _ in }.mailboxes[0])
        } catch {
            return .failure(ClientError(code: .connectFailed, message: "cannot start the client I/O thread: \(error)"))
        }
    }()

    private static let resolver = DispatchQueue(label: "ringd-client-resolver")

    /// Runs `task` on the loop; false, and the task dropped, when the loop
    /// could not start (then no connection exists either: opening one failed).
    @discardableResult
    static func submit(_ task: @escaping LoopMailbox.Task) -> Bool {
        guard case .success(let mailbox) = started else { return false }
        mailbox.submit(task)
        return true
    }

    /// Resolves `endpoint`'s host off the loop, then calls `body` on the loop
    /// with its addresses (in the resolver's order of preference); or, on
    /// any thread, with why there are none.
    static func resolve(
        _ endpoint: ServerEndpoint,
        then body: @escaping @Sendable (Result<(EventLoop, [SocketAddress]), ClientError>) -> Void
    ) {
        let mailbox: LoopMailbox
        switch started {
        case .success(let started): mailbox = started
        case .failure(let error): return body(.failure(error))
        }
        resolver.async {
            do throws(ResolveError) {
                let addresses = try SocketAddress.resolveAll(host: endpoint.host, port: endpoint.port)
                mailbox.submit { loop in body(.success((loop, addresses))) }
            } catch {
                body(.failure(ClientError(code: .connectFailed, message: error.description)))
            }
        }
    }

    /// Runs `body` on the loop and returns what it hands to its completion,
    /// which it must call exactly once; `unavailable` when the loop could not start.
    static func perform<Value: Sendable>(
        orElse unavailable: Value,
        _ body: @escaping @Sendable (EventLoop, @escaping @Sendable (Value) -> Void) -> Void
    ) async -> Value {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            let submitted = submit { loop in body(loop) { continuation.resume(returning: $0) } }
            if !submitted { continuation.resume(returning: unavailable) }
        }
    }
}
