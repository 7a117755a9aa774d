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
    /// The loop's way in from other threads.
    static let mailbox: LoopMailbox = {
        do {
            return try EventLoopGroup(count: 1, name: "ringd-client-io") { _ in }.mailboxes[0]
        } catch {
            // Without an epoll descriptor, an eventfd and a thread, no client can exist.
            fatalError("cannot start the client I/O thread: \(error)")
        }
    }()

    private static let resolver = DispatchQueue(label: "ringd-client-resolver")

    /// Resolves `endpoint`'s host off the loop, then calls `body` on the loop
    /// with its addresses (in the resolver's order of preference) or the failure.
    static func resolve(_ endpoint: ServerEndpoint,
                        then body: @escaping @Sendable (EventLoop, Result<[SocketAddress], ClientError>) -> Void) {
        resolver.async {
            let result = Result { () throws(ClientError) -> [SocketAddress] in
                do throws(ResolveError) {
                    return try SocketAddress.resolveAll(host: endpoint.host, port: endpoint.port)
                } catch {
                    throw ClientError(code: .connectFailed, message: error.description)
                }
            }
            mailbox.submit { loop in body(loop, result) }
        }
    }

    /// Runs `body` on the loop and returns what it hands to its completion,
    /// which it must call exactly once (on the loop or later from it).
    static func perform<Value: Sendable>(
        _ body: @escaping @Sendable (EventLoop, @escaping @Sendable (Value) -> Void) -> Void
    ) async -> Value {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            mailbox.submit { loop in body(loop) { continuation.resume(returning: $0) } }
        }
    }
}
