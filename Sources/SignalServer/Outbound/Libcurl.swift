import CCurl

/// libcurl, process-wide: `curl_global_init` (once, on first use, never
/// cleaned up) and what the linked build can do.
enum Libcurl {
    /// Why `curl_global_init` failed, if it did; it runs on first use.
    static let globalInitFailure: OutboundError? = {
        let result = curl_global_init(ringd_curl_global_default)
        guard result != CURLE_OK else { return nil }
        return OutboundError(
            .other, "curl_global_init: \(String(cString: curl_easy_strerror(result)))",
            curlCode: Int(result.rawValue))
    }()

    /// What the linked libcurl was built with.
    struct Info: Sendable {
        /// e.g. "7.88.1".
        var version: String
        /// The TLS library, e.g. "OpenSSL/3.0.19".
        var tlsVersion: String?
        /// nghttp2's version when HTTP/2 is built in.
        var http2Version: String?
        /// Name resolution never blocks a transfer's thread (AsynchDNS).
        var asynchronousDNS: Bool
        /// That asynchronous resolver is libcurl's threaded one (getaddrinfo on
        /// a helper thread, so /etc/hosts and nsswitch apply), not c-ares.
        var threadedResolver: Bool
        var http2: Bool
        /// `curl_global_init` is thread-safe.
        var threadSafe: Bool
    }

    static let info: Info = {
        _ = globalInitFailure
        guard let data = ringd_curl_version_info()?.pointee else {
            return Info(version: "?", asynchronousDNS: false, threadedResolver: false, http2: false, threadSafe: false)
        }
        let features = Int(data.features)
        let asynchronous = features & Int(CURL_VERSION_ASYNCHDNS) != 0
        return Info(
            version: data.version.map { String(cString: $0) } ?? "?",
            tlsVersion: data.ssl_version.map { String(cString: $0) },
            http2Version: data.nghttp2_version.map { String(cString: $0) },
            asynchronousDNS: asynchronous,
            threadedResolver: asynchronous && data.ares == nil,
            http2: features & Int(CURL_VERSION_HTTP2) != 0,
            threadSafe: features & Int(CURL_VERSION_THREADSAFE) != 0)
    }()
}
