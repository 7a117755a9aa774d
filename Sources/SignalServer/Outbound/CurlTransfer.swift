import CCurl
import SignalProtocol
import SignalSystem

/// One POST on the curl thread: its easy handle, header list, error buffer
/// and what has come back so far. Lives on the curl thread only, from
/// ``CurlMulti`` adding it until it finishes or is failed; ``release()``
/// frees its C resources.
final class CurlTransfer {
    /// The `CURL *` easy handle.
    let handle: UnsafeMutableRawPointer
    let completion: @Sendable (OutboundResponse) -> Void
    private let queuedAt: Deadline
    /// Shortly after the request's timeout, counted from `send`, runs out.
    /// libcurl's own timeout (`CURLOPT_TIMEOUT_MS`, with its more telling
    /// message) ends a transfer first, except one still waiting for a free
    /// connection (`CURLMOPT_MAX_HOST_CONNECTIONS`), where it does not run:
    /// ``CurlMulti`` fails those at this deadline.
    let deadline: Deadline
    /// How much later than its timeout ``deadline`` is.
    static let deadlineGrace = 0.05
    private let timeout: Double
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The first ``OutboundHTTPClient/keptBodyBytes`` of the body.
    private(set) var body: [UInt8] = []

    /// A configured easy handle for `request`, or why there is none.
    static func make(
        _ pending: OutboundQueue.Pending, settings: OutboundHTTPClient.Settings,
        share: UnsafeMutableRawPointer?
    ) -> Result<CurlTransfer, OutboundError> {
        guard let handle = curl_easy_init() else {
            return .failure(OutboundError(.other, "curl_easy_init failed"))
        }
        let transfer = CurlTransfer(handle: handle, pending: pending)
        if let error = transfer.configure(pending.request, settings: settings, share: share) {
            transfer.release()
            return .failure(error)
        }
        return .success(transfer)
    }

    private init(handle: UnsafeMutableRawPointer, pending: OutboundQueue.Pending) {
        self.handle = handle
        completion = pending.completion
        queuedAt = pending.queuedAt
        timeout = pending.request.timeout
        deadline = pending.queuedAt.adding(seconds: min(pending.request.timeout, 86_400) + Self.deadlineGrace)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    /// Sets every option; the first failure, if any.
    private func configure(
        _ request: OutboundRequest, settings: OutboundHTTPClient.Settings,
        share: UnsafeMutableRawPointer?
    ) -> OutboundError? {
        let scheme = request.url.prefix { $0 != ":" }.lowercased()
        guard scheme == "http" || scheme == "https" else {
            return OutboundError(.request, "not an http or https URL: \(redactedURL(request.url))")
        }
        guard request.timeout.isFinite, request.timeout > 0 else {
            return OutboundError(.request, "timeout must be positive, not \(request.timeout)")
        }
        switch Self.headerLines(request.headers) {
        case .failure(let error): return error
        case .success(let lines):
            for line in lines {
                guard let appended = curl_slist_append(headerList, line) else {
                    return OutboundError(.other, "curl_slist_append failed")
                }
                headerList = appended
            }
        }
        let timeout = max(1, Int(min(request.timeout, 86_400) * 1000))
        let connectTimeout = min(timeout, max(1, Int(settings.connectTimeout * 1000)))
        var codes: [CURLcode] = [
            ringd_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer),
            ringd_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            ringd_curl_setopt_str(handle, CURLOPT_URL, request.url),
            ringd_curl_setopt_str(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            ringd_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            ringd_curl_setopt_long(handle, CURLOPT_POST, 1),
            ringd_curl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)),
            ringd_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList),
            ringd_curl_setopt_str(handle, CURLOPT_USERAGENT, OutboundHTTPClient.userAgent),
            ringd_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeout),
            ringd_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeout),
            ringd_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)),
            ringd_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1),
            ringd_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2),
            ringd_curl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1),
            // A transfer that ends (timeout, close) while the threaded resolver
            // still waits for DNS detaches the resolver thread, which frees
            // itself once getaddrinfo returns, instead of joining it: without
            // this the curl thread, and every other exchange, would wait out
            // the slow lookup.
            ringd_curl_setopt_long(handle, CURLOPT_QUICK_EXIT, 1),
            ringd_curl_setopt_writefn(handle, curlTransferWrite),
            ringd_curl_setopt_ptr(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque()),
        ]
        // Copied by libcurl: the body may hold NUL bytes, its size is set above.
        codes.append(
            request.body.withUnsafeBytes { bytes in
                ringd_curl_setopt_ptr(
                    handle, CURLOPT_COPYPOSTFIELDS,
                    UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(errorBuffer)))
            })
        if scheme == "https" {
            // Wait for a connection being set up to the host, which ALPN may
            // make HTTP/2 (shared), rather than open another at once. Only
            // over TLS: ALPN tells once the handshake is done, while over
            // plain HTTP libcurl learns a connection is HTTP/1.1 only from
            // its first answer, which a silent receiver never sends.
            codes.append(ringd_curl_setopt_long(handle, CURLOPT_PIPEWAIT, 1))
        }
        if let caFile = request.caFile ?? settings.caFile {
            codes.append(ringd_curl_setopt_str(handle, CURLOPT_CAINFO, caFile))
        }
        if let share { codes.append(ringd_curl_setopt_ptr(handle, CURLOPT_SHARE, share)) }
        if let failed = codes.first(where: { $0 != CURLE_OK }) {
            return OutboundError(
                .other, "curl_easy_setopt: \(Self.text(failed))",
                curlCode: Int(failed.rawValue))
        }
        return nil
    }

    /// `Name: value` lines for curl: the caller's fields, `Content-Type`
    /// unless given, and an empty `Expect` (no `100-continue` round trip).
    static func headerLines(_ headers: [(String, String)]) -> Result<[String], OutboundError> {
        var lines: [String] = []
        var hasContentType = false
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                return .failure(OutboundError(.request, "invalid header field name \"\(name)\""))
            }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                return .failure(OutboundError(.request, "header field \(name) holds CR, LF or NUL"))
            }
            if name.lowercased() == "content-type" { hasContentType = true }
            let trimmed = value.trimmingWhitespace()
            // curl drops "Name:" (it removes an internal header); "Name;" sends it empty.
            lines.append(trimmed.isEmpty ? "\(name);" : "\(name): \(trimmed)")
        }
        if !hasContentType { lines.append("Content-Type: application/json") }
        lines.append("Expect:")
        return .success(lines)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool { HTTPToken.isTokenByte(byte) }

    /// Called by libcurl with each piece of the body: keeps the first bytes, drops the rest.
    fileprivate func received(_ data: UnsafeRawBufferPointer) {
        let room = OutboundHTTPClient.keptBodyBytes - body.count
        if room > 0 { body.append(contentsOf: data.prefix(room)) }
    }

    /// The response for a transfer libcurl finished with `result`.
    func response(result: CURLcode) -> OutboundResponse {
        var code = 0
        _ = ringd_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        var version = 0
        _ = ringd_curl_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        var error: OutboundError?
        if result != CURLE_OK {
            let detail = String(cString: errorBuffer)
            error = OutboundError(
                Self.classify(result), detail.isEmpty ? Self.text(result) : detail,
                curlCode: Int(result.rawValue))
        }
        let retryAfter =
            code > 0
            ? ringd_curl_response_header(handle, "retry-after")
                .flatMap { Double(String(cString: $0).trimmingWhitespace()) }.flatMap {
                    $0.isFinite && $0 >= 0 ? $0 : nil
                } : nil
        return OutboundResponse(
            status: code > 0 ? code : nil, error: error, elapsed: elapsed(),
            body: body, httpVersion: code > 0 ? Self.versionName(version) : nil,
            retryAfter: retryAfter)
    }

    /// The response for a transfer past its ``deadline``.
    func timedOutResponse() -> OutboundResponse {
        var response = self.response(result: CURLE_OK)
        let message =
            response.status == nil
            ? "no answer within the \(timeout) s timeout (still waiting for a free connection to the host)"
            : "the answer did not complete within the \(timeout) s timeout"
        response.error = OutboundError(.timeout, message)
        return response
    }

    /// Seconds since the request was handed to `send`.
    func elapsed() -> Double { Deadline.now().seconds(since: queuedAt) }

    private static func versionName(_ version: Int) -> String? {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): return "1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "2"
        case Int(CURL_HTTP_VERSION_3): return "3"
        default: return nil
        }
    }

    /// The stable code for a libcurl failure.
    static func classify(_ result: CURLcode) -> OutboundError.Code {
        switch result {
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_COULDNT_CONNECT:
            return .connect
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .dns
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tls
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT:
            return .request
        default:
            return .other
        }
    }

    static func text(_ result: CURLcode) -> String { String(cString: curl_easy_strerror(result)) }

    /// Frees the easy handle, the header list and the error buffer; once,
    /// after the handle left the multi handle.
    func release() {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        headerList = nil
        errorBuffer.deallocate()
    }
}

/// CURLOPT_WRITEFUNCTION: `context` is the unretained ``CurlTransfer``,
/// alive while its handle is in the multi handle.
private func curlTransferWrite(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ context: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let context, let data else { return length }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    transfer.received(UnsafeRawBufferPointer(start: data, count: length))
    return length
}
