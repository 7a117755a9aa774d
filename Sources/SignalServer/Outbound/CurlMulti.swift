import CCurl
import SignalSystem

/// The curl thread's side of ``OutboundHTTPClient``: a libcurl multi handle
/// (its connection cache and DNS cache), a share handle for TLS sessions,
/// and the transfers in flight. Made, run and cleaned up on the curl
/// thread; nothing else touches it.
final class CurlMulti {
    private let multi: UnsafeMutableRawPointer
    private let share: UnsafeMutableRawPointer?
    private let queue: OutboundQueue
    private let settings: OutboundHTTPClient.Settings
    /// In flight, by easy handle.
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// No transfer's deadline is earlier than this (it may be stale: an
    /// earlier transfer may have finished since).
    private var nextDeadline: Deadline?

    /// Requests multiplexed on one HTTP/2 connection at most (the server's
    /// own limit applies too).
    static let maxStreamsPerConnection = 1000

    /// How long one `curl_multi_poll` waits at most when nothing happens
    /// (libcurl's own timers and `curl_multi_wakeup` end it sooner).
    private static let pollMilliseconds: Int32 = 1000

    init(queue: OutboundQueue, settings: OutboundHTTPClient.Settings) throws(OutboundError) {
        guard let multi = curl_multi_init() else { throw OutboundError(.other, "curl_multi_init failed") }
        let perHost = max(1, settings.maxConnectionsPerHost)
        let codes = [
            ringd_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, perHost),
            // Idle connections kept for reuse, across hosts.
            ringd_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(16, 4 * perHost)),
            ringd_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)),
            // libcurl's default of 100 streams per HTTP/2 connection would
            // queue pushes to a slow APNs, which takes 1,000 per connection.
            ringd_curl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, Self.maxStreamsPerConnection),
        ]
        if let failed = codes.first(where: { $0 != CURLM_OK }) {
            curl_multi_cleanup(multi)
            throw OutboundError(.other, "curl_multi_setopt: \(String(cString: curl_multi_strerror(failed)))")
        }
        self.multi = multi
        // TLS session resumption across easy handles; without it (never
        // expected) every new connection does a full handshake.
        var share = curl_share_init()
        if let created = share, ringd_curl_share_data(created, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK {
            curl_share_cleanup(created)
            share = nil
        }
        self.share = share
        self.queue = queue
        self.settings = settings
        queue.setMulti(multi)
    }

    /// Serves requests until the queue closes, then fails what is left
    /// with `CLOSED` and cleans up.
    func run() {
        var running: Int32 = 0
        while true {
            let (incoming, closed) = queue.take()
            if closed {
                shutDown(incoming)
                return
            }
            for pending in incoming { start(pending) }
            let performed = curl_multi_perform(multi, &running)
            if performed != CURLM_OK { Log.error("outbound HTTP: curl_multi_perform: \(Self.text(performed))") }
            finishDone()
            expireOverdue()
            let polled = curl_multi_poll(multi, nil, 0, pollMilliseconds(), nil)
            if polled != CURLM_OK {
                // Only a broken multi handle fails here: stop rather than spin.
                Log.error("outbound HTTP: curl_multi_poll: \(Self.text(polled)); the outbound HTTP client stops")
                _ = queue.close()
            }
        }
    }

    /// Adds a transfer for `pending`, or completes it at once with why not.
    private func start(_ pending: OutboundQueue.Pending) {
        switch CurlTransfer.make(pending, settings: settings, share: share) {
        case .failure(let error):
            pending.completion(
                OutboundResponse(
                    status: nil, error: error,
                    elapsed: Deadline.now().seconds(since: pending.queuedAt)))
        case .success(let transfer):
            let added = curl_multi_add_handle(multi, transfer.handle)
            guard added == CURLM_OK else {
                let error = OutboundError(.other, "curl_multi_add_handle: \(Self.text(added))")
                transfer.release()
                pending.completion(OutboundResponse(status: nil, error: error, elapsed: transfer.elapsed()))
                return
            }
            transfers[transfer.handle] = transfer
            nextDeadline = min(nextDeadline ?? transfer.deadline, transfer.deadline)
        }
    }

    /// How long to poll: until the next deadline, at most ``pollMilliseconds``.
    private func pollMilliseconds() -> Int32 {
        guard let nextDeadline else { return Self.pollMilliseconds }
        let left = nextDeadline.seconds(since: .now())
        return Int32(max(0, min(Double(Self.pollMilliseconds), (left * 1000).rounded(.up))))
    }

    /// Fails with `TIMEOUT` every transfer past its deadline, also one that
    /// still waits for a connection, where libcurl's own timeout does not run.
    private func expireOverdue() {
        let now = Deadline.now()
        guard let next = nextDeadline, next <= now else { return }
        nextDeadline = nil
        var overdue: [CurlTransfer] = []
        for transfer in transfers.values {
            if transfer.deadline <= now {
                overdue.append(transfer)
            } else {
                nextDeadline = min(nextDeadline ?? transfer.deadline, transfer.deadline)
            }
        }
        for transfer in overdue {
            let response = transfer.timedOutResponse()
            transfers[transfer.handle] = nil
            curl_multi_remove_handle(multi, transfer.handle)
            transfer.release()
            transfer.completion(response)
        }
    }

    /// Completes every transfer libcurl reports done.
    private func finishDone() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                let transfer = transfers.removeValue(forKey: handle)
            else { continue }
            // Read everything from the message before removing the handle,
            // which frees it.
            let result = ringd_curl_msg_result(message)
            let response = transfer.response(result: result)
            curl_multi_remove_handle(multi, handle)
            transfer.release()
            transfer.completion(response)
        }
    }

    /// Fails the requests never started and those in flight, then frees
    /// every handle. The queue is closed: nothing more arrives.
    private func shutDown(_ unstarted: [OutboundQueue.Pending]) {
        queue.setMulti(nil)
        let closed = OutboundError(.closed, "the outbound HTTP client was closed")
        var responses: [(OutboundResponse, @Sendable (OutboundResponse) -> Void)] = []
        for transfer in transfers.values {
            var response = transfer.response(result: CURLE_OK)
            response.error = closed
            curl_multi_remove_handle(multi, transfer.handle)
            transfer.release()
            responses.append((response, transfer.completion))
        }
        transfers = [:]
        for pending in unstarted {
            responses.append(
                (
                    OutboundResponse(
                        status: nil, error: closed,
                        elapsed: Deadline.now().seconds(since: pending.queuedAt)),
                    pending.completion
                ))
        }
        curl_multi_cleanup(multi)
        if let share { curl_share_cleanup(share) }
        for (response, completion) in responses { completion(response) }
    }

    private static func text(_ code: CURLMcode) -> String { String(cString: curl_multi_strerror(code)) }
}
