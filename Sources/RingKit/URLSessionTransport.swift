import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The transport over Foundation's URLSessionWebSocketTask, the one Apple
/// platforms use (``RingTransportFactory/default`` there). Kept thin: the
/// protocol is ``RingClient``'s, tested on Linux over the reactor transport.
///
/// It compiles on Linux, but cannot connect there: swift-corelibs-foundation
/// runs URLSession on libcurl, and Debian's libcurl is built without
/// WebSocket support ("WebSockets not supported by libcurl"), so
/// ``open(url:onEvent:)`` fails with `CLIENT_CONNECT_FAILED`.
public struct URLSessionTransport: RingTransport {
    public let session: URLSession

    public init(session: URLSession = .shared) {
        self.session = session
    }

    public func open(
        url: String, onEvent: @escaping @Sendable (RingTransportEvent) -> Void
    ) async throws(RingError) -> any RingTransportConnection {
        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), scheme == "ws" || scheme == "wss"
        else { throw RingError(code: RingError.Code.badURL, message: "not a ws:// or wss:// URL: \(url)") }
        let task = session.webSocketTask(with: target)
        task.resume()
        // The task says nothing when the upgrade is done; a ping is answered
        // only after it, and fails when it failed.
        let failure: (any Error)? = await withCheckedContinuation { continuation in
            task.sendPing { continuation.resume(returning: $0) }
        }
        if let failure {
            task.cancel()
            throw RingError(code: RingError.Code.connectFailed, message: "\(url): \(failure)")
        }
        let connection = URLSessionConnection(task: task)
        connection.receive(onEvent)
        return connection
    }
}

/// One URLSessionWebSocketTask. URLSessionTask is thread-safe (Foundation
/// documents its methods as callable from any thread).
final class URLSessionConnection: RingTransportConnection, @unchecked Sendable {
    let task: URLSessionWebSocketTask

    init(task: URLSessionWebSocketTask) {
        self.task = task
    }

    func send(_ text: String) {
        let task = self.task
        // A failed send leaves the socket unusable: cancelling ends the
        // receive loop, which reports the close.
        task.send(.string(text)) { error in if error != nil { task.cancel() } }
    }

    func close(code: UInt16) {
        task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure, reason: nil)
    }

    /// Receives messages one after another until the task fails, then reports the close.
    func receive(_ onEvent: @escaping @Sendable (RingTransportEvent) -> Void) {
        task.receive { [self] result in
            switch result {
            case .success(.string(let text)):
                onEvent(.text(text))
                receive(onEvent)
            case .success:
                // ringd sends text frames only.
                receive(onEvent)
            case .failure(let error):
                let code = task.closeCode == .invalid ? nil : UInt16(clamping: task.closeCode.rawValue)
                let reason = task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? error.localizedDescription
                onEvent(.closed(code: code, reason: reason))
            }
        }
    }
}
