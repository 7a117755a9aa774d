import CCurl
import Foundation
import SignalProtocol
import SignalSystem
import Synchronization

/// ringd's outbound HTTP, shared by webhooks and push: POSTs over libcurl
/// on one thread of its own, `ringd-http-out`, which runs a multi handle.
/// Any number of exchanges run at once there, to any number of servers; a
/// dead or slow server holds up only its own requests (and, once
/// `maxConnectionsPerHost` connections to it are busy, later ones to that
/// host), never a caller or another server. Name resolution runs in
/// libcurl's threaded resolver (``Libcurl/info``), so it does not block the
/// curl thread either.
///
/// Connections are kept and reused: libcurl's connection cache belongs to
/// the multi handle, so every request to a host shares the connections
/// earlier ones left open; over TLS, ALPN asks for HTTP/2 and falls back to
/// HTTP/1.1 (`CURL_HTTP_VERSION_2TLS`), and HTTP/2 requests to a host share
/// one connection. TLS sessions are resumed across connections (a share
/// handle). Certificates are verified (peer and host name) against the
/// system's CA store, or the request's `caFile`, or the client's. Redirects
/// are not followed: a 3xx is an answer like any other. Environment proxies
/// (`https_proxy`, `no_proxy`…) apply as for any libcurl program.
///
/// The curl handles live on the curl thread only; `send` hands requests
/// over through a locked queue (``OutboundQueue``) and `curl_multi_wakeup`.
final class OutboundHTTPClient: Sendable {
    /// What the curl thread needs to know.
    struct Settings: Sendable {
        var maxConnectionsPerHost: Int
        var caFile: String?
        var connectTimeout: Double
    }

    /// How much of an answer's body a ``OutboundResponse`` keeps.
    static let keptBodyBytes = 4096
    static let userAgent = "ringd/\(RingdVersion.current)"
    static let threadName = "ringd-http-out"

    private let queue = OutboundQueue()
    /// Signalled once when the curl thread has exited (and again by each waiter).
    private let finished = DispatchSemaphore(value: 0)
    private let curlThread: pthread_t

    /// Starts the curl thread. At most `maxConnectionsPerHost` connections
    /// are open to one host at a time (more requests wait for one);
    /// `caFile` (PEM) replaces the system's CA store; `connectTimeout`
    /// bounds name resolution, TCP connect and TLS handshake of a new
    /// connection (and never exceeds a request's own timeout). Throws when
    /// the CA file is unreadable or libcurl cannot start.
    init(maxConnectionsPerHost: Int, caFile: String?, connectTimeout: Double = 10) throws(OutboundError) {
        if let caFile { try Self.checkCAFile(caFile) }
        if let failure = Libcurl.globalInitFailure { throw failure }
        let settings = Settings(
            maxConnectionsPerHost: maxConnectionsPerHost, caFile: caFile,
            connectTimeout: connectTimeout)
        let queue = self.queue, finished = self.finished
        let outcome = Mutex<Result<pthread_t, OutboundError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { finished.signal() }
            let multi: CurlMulti
            do throws(OutboundError) {
                multi = try CurlMulti(queue: queue, settings: settings)
            } catch {
                outcome.withLock { $0 = .failure(error) }
                ready.signal()
                return
            }
            outcome.withLock { $0 = .success(pthread_self()) }
            ready.signal()
            multi.run()
        }
        thread.name = Self.threadName
        thread.start()
        ready.wait()
        switch outcome.withLock({ $0 }) {
        case .success(let id): curlThread = id
        case .failure(let error): throw error
        case nil: throw OutboundError(.other, "the curl thread did not start")
        }
    }

    /// Throws when the CA file `path` cannot be read (checked at start, not
    /// at the first request).
    static func checkCAFile(_ path: String) throws(OutboundError) {
        if access(path, R_OK) != 0 { throw OutboundError(.tls, "cannot read the CA file \(path)") }
    }

    /// POSTs `request`; `completion` gets the outcome once. It runs on the
    /// curl thread, which serves every other exchange meanwhile, so it must
    /// be quick and must not block: hand real work to another thread. It
    /// may call `send` and `close`. Once the client is closed, `completion`
    /// runs at once on the calling thread with `CLOSED`, before `send`
    /// returns (so do not call `send` holding a lock the completion takes).
    func send(_ request: OutboundRequest, completion: @escaping @Sendable (OutboundResponse) -> Void) {
        let pending = OutboundQueue.Pending(request: request, completion: completion, queuedAt: .now())
        if !queue.submit(pending) {
            completion(
                OutboundResponse(
                    status: nil, error: OutboundError(.closed, "the outbound HTTP client is closed"),
                    elapsed: 0))
        }
    }

    /// Stops taking requests, fails those not finished with `CLOSED` (their
    /// completions run on the curl thread), closes the connections and waits
    /// for the curl thread to exit. Called from a completion, it returns at
    /// once and the thread exits when the completion returns. Idempotent.
    func close() {
        _ = queue.close()
        guard pthread_equal(pthread_self(), curlThread) == 0 else { return }
        finished.wait()
        finished.signal()
    }

    deinit { close() }
}
