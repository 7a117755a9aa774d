import Foundation

/// Runs blocking work (connects, handshakes, HTTP exchanges) on a thread of
/// its own, so that async callers and the cooperative pool are never blocked.
func runBlocking<Value: Sendable>(_ work: @escaping @Sendable () throws(ClientError) -> Value) async throws(ClientError) -> Value {
    let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, ClientError>, Never>) in
        let thread = Thread {
            continuation.resume(returning: Result { () throws(ClientError) -> Value in try work() })
        }
        thread.name = "ringd-client-io"
        thread.start()
    }
    return try outcome.get()
}
