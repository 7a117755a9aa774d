/// An HTTP status code with its reason phrase and the stable error code used
/// in JSON error bodies.
public struct HTTPStatus: Hashable, Sendable {
    /// The three-digit code.
    public let code: Int
    /// The reason phrase sent on the status line.
    public let reason: String

    public init(_ code: Int, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// 101: the connection switches to WebSocket.
    public static let switchingProtocols = HTTPStatus(101, "Switching Protocols")
    public static let ok = HTTPStatus(200, "OK")
    public static let created = HTTPStatus(201, "Created")
    public static let noContent = HTTPStatus(204, "No Content")
    /// 302: the resource is at `Location` (`/` sends browsers to the phone).
    public static let found = HTTPStatus(302, "Found")
    /// 400: malformed request.
    public static let badRequest = HTTPStatus(400, "Bad Request")
    /// 401: missing or bad credentials.
    public static let unauthorized = HTTPStatus(401, "Unauthorized")
    /// 404: no such resource.
    public static let notFound = HTTPStatus(404, "Not Found")
    /// 405: the resource exists but not with this method.
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    /// 408: the request did not arrive in time.
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    /// 413: the body is over the limit.
    /// The request conflicts with the resource's state (a retry of a delivery that has not failed).
    public static let conflict = HTTPStatus(409, "Conflict")
    public static let contentTooLarge = HTTPStatus(413, "Content Too Large")
    /// 429: over a rate limit; `Retry-After` says when to come back.
    public static let tooManyRequests = HTTPStatus(429, "Too Many Requests")
    /// 426: this resource speaks WebSocket (version 13) only.
    public static let upgradeRequired = HTTPStatus(426, "Upgrade Required")
    /// 431: the header block is over 8 KiB.
    public static let headersTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(500, "Internal Server Error")
    /// 501: a request feature the server does not implement (chunked bodies).
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    /// 503: the server is at its connection limit or shutting down.
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    /// 505: an HTTP version other than 1.0 and 1.1.
    public static let versionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")

    /// The stable error code for a JSON error body with this status.
    public var errorCode: String {
        switch code {
        case 400: return "ERR_BAD_REQUEST"
        case 401: return "ERR_UNAUTHORIZED"
        case 404: return "ERR_NOT_FOUND"
        case 405: return "ERR_METHOD_NOT_ALLOWED"
        case 408: return "ERR_REQUEST_TIMEOUT"
        case 409: return "ERR_CONFLICT"
        case 413: return "ERR_BODY_TOO_LARGE"
        case 426: return "ERR_UPGRADE_REQUIRED"
        case 429: return "ERR_RATE_LIMITED"
        case 431: return "ERR_HEADERS_TOO_LARGE"
        case 501: return "ERR_NOT_IMPLEMENTED"
        case 503: return "ERR_UNAVAILABLE"
        case 505: return "ERR_HTTP_VERSION"
        default: return "ERR_INTERNAL"
        }
    }
}
