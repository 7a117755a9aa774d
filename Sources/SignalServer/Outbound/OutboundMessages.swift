/// One POST for ``OutboundHTTPClient``: where, which extra header
/// fields, the body (sent as `Content-Type: application/json` unless a
/// `Content-Type` is among the headers), and how long the whole exchange may
/// take.
struct OutboundRequest: Sendable {
    /// An `http://` or `https://` URL; any other scheme fails with `REQUEST`.
    var url: String
    /// Extra header fields, sent in order. A name must be an HTTP token and a
    /// value must hold no CR, LF or NUL; otherwise the request fails with
    /// `REQUEST` without being sent.
    var headers: [(String, String)]
    var body: [UInt8]
    /// Seconds for the whole exchange (connect, send, the full answer);
    /// at least a millisecond.
    var timeout: Double
    /// PEM CA certificates that replace the client's for this request (each
    /// feature has its own `caFile` setting).
    var caFile: String?

    init(url: String, headers: [(String, String)] = [], body: [UInt8], timeout: Double, caFile: String? = nil) {
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.caFile = caFile
    }
}

/// What became of a ``OutboundRequest``.
///
/// `status` is set whenever the receiver's answer head arrived, whatever its
/// code; `error` when the exchange failed (no answer, or an answer cut
/// short: then both are set). A receiver took the event only when `error`
/// is nil and `status` is a 2xx, but that policy is the caller's.
struct OutboundResponse: Sendable {
    /// The HTTP status code of the answer.
    var status: Int?
    var error: OutboundError?
    /// Seconds from `send` to the completion, including any wait for a
    /// free connection.
    var elapsed: Double
    /// The first ``OutboundHTTPClient/keptBodyBytes`` bytes of the answer's
    /// body (the rest is read and dropped), for log and error messages.
    var body: [UInt8] = []
    /// The HTTP version the answer came in ("1.1", "2"), when one came.
    var httpVersion: String? = nil
    /// The answer's `Retry-After` in seconds, when it gave one as a number
    /// (the HTTP-date form is not read).
    var retryAfter: Double? = nil

    /// The kept body as text (invalid UTF-8 replaced).
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Why an outbound exchange failed, with a stable ``code`` and libcurl's message.
struct OutboundError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: String, Sendable {
        /// The whole-request or the connect timeout ran out.
        case timeout = "TIMEOUT"
        /// No TCP connection: refused, unreachable.
        case connect = "CONNECT"
        /// The host name did not resolve.
        case dns = "DNS"
        /// The TLS handshake or the certificate check failed (also an
        /// unreadable CA file).
        case tls = "TLS"
        /// The request itself is unusable: a malformed URL, a scheme other
        /// than http/https, an invalid header field.
        case request = "REQUEST"
        /// The client was closed before the exchange finished, or before
        /// it was sent.
        case closed = "CLOSED"
        /// Anything else: the connection dropped mid-exchange, an HTTP/2
        /// error, out of memory…
        case other = "OTHER"
    }

    var code: Code
    /// libcurl's message (its error buffer, or `curl_easy_strerror`), or ours.
    var message: String
    /// libcurl's `CURLcode`, when the error came from libcurl.
    var curlCode: Int?

    init(_ code: Code, _ message: String, curlCode: Int? = nil) {
        self.code = code
        self.message = message
        self.curlCode = curlCode
    }

    var description: String { "\(code.rawValue): \(message)" }
}
