import SignalProtocol

/// A client-side failure: the server's error code or one the client itself
/// detected (``ClientErrorCode``), with a message for people.
public struct ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, as a stable code.
    public let code: ClientErrorCode
    /// What went wrong, for people.
    public let message: String
    /// The WebSocket close code, when the failure is a close frame from the server.
    public let closeCode: UInt16?
    /// The HTTP status, for ``ClientErrorCode/http`` and ``ClientErrorCode/handshakeFailed``.
    public let httpStatus: Int?

    public init(code: ClientErrorCode, message: String, closeCode: UInt16? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.closeCode = closeCode
        self.httpStatus = httpStatus
    }

    /// The server's answer `error`, as the client reports it.
    public init(_ error: SignalError) {
        self.init(code: .server(error.code), message: error.message)
    }

    /// `CODE: message`.
    public var description: String { "\(code): \(message)" }
}

/// The code of a ``ClientError``: one of the server's `ERR_…` codes
/// (``server(_:)``), or a `CLIENT_…` code for what the client detects itself.
public struct ClientErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// The server's code `code`.
    public static func server(_ code: SignalErrorCode) -> ClientErrorCode { ClientErrorCode(rawValue: code.rawValue) }

    /// The server's code, when the failure is the server's answer rather than the client's finding.
    public var serverCode: SignalErrorCode? {
        rawValue.hasPrefix("CLIENT_") ? nil : SignalErrorCode(rawValue: rawValue)
    }

    public var description: String { rawValue }

    /// The server address could not be understood, or names an unsupported scheme.
    public static let badURL = ClientErrorCode(rawValue: "CLIENT_BAD_URL")
    /// The host did not resolve, or the TCP connection failed or was refused.
    public static let connectFailed = ClientErrorCode(rawValue: "CLIENT_CONNECT_FAILED")
    /// The TLS handshake failed: the certificate did not verify (untrusted,
    /// expired, another name), no common protocol, or no TLS on that port.
    public static let tlsFailed = ClientErrorCode(rawValue: "CLIENT_TLS")
    /// The server refused the WebSocket upgrade or answered it wrongly.
    public static let handshakeFailed = ClientErrorCode(rawValue: "CLIENT_HANDSHAKE_FAILED")
    /// The WebSocket or TCP connection closed (`closeCode` is set when a close frame came).
    public static let closed = ClientErrorCode(rawValue: "CLIENT_CLOSED")
    /// The server did not answer in time.
    public static let timeout = ClientErrorCode(rawValue: "CLIENT_TIMEOUT")
    /// The server sent something the client did not expect.
    public static let protocolViolation = ClientErrorCode(rawValue: "CLIENT_PROTOCOL")
    /// A REST request got a status other than 2xx (`httpStatus` is set).
    public static let http = ClientErrorCode(rawValue: "CLIENT_HTTP")
}

extension ClientError {
    /// Whether another node of the cluster might take the device after this
    /// failure to connect: yes for the client's own findings (unreachable,
    /// TLS, upgrade, timeout, a broken answer) and a server that is shutting
    /// down (`ERR_UNAVAILABLE`); no for any other refusal by a server, which
    /// every node would repeat.
    var isWorthAnotherEndpoint: Bool {
        code.serverCode == nil || code == .server(.unavailable)
    }

    /// Whether another node of the cluster might answer a REST request
    /// after this failure: yes when the node was not reached or did not
    /// answer (no connection or TLS, no answer in time, closed before
    /// answering), and for HTTP 503, which ringd answers without handling
    /// the request (at its connection limit, or in a cluster while it has no
    /// node number). Any other answer, an HTTP error or a broken one, is the
    /// request's own outcome, which every node would repeat.
    public var isWorthAnotherRESTEndpoint: Bool {
        switch code {
        case .connectFailed, .tlsFailed, .timeout, .closed: true
        case .http: httpStatus == 503
        default: false
        }
    }

    /// What trying several endpoints in turn came to when each failed: the
    /// last failure's code, close code and status, with each endpoint's
    /// reason in the message; a lone failure as it is; none at all is
    /// ``ClientErrorCode/badURL``.
    public init(everyEndpointFailed failures: [(endpoint: ServerEndpoint, error: ClientError)]) {
        guard let last = failures.last?.error, failures.count > 1 else {
            self = failures.first?.error ?? ClientError(code: .badURL, message: "no server endpoint given")
            return
        }
        let reasons = failures.map { "\($0.endpoint.webSocketURL): \($0.error.message)" }.joined(separator: "; ")
        self.init(
            code: last.code, message: "every server failed: \(reasons)",
            closeCode: last.closeCode, httpStatus: last.httpStatus)
    }

    /// A ``ClientErrorCode/closed`` error.
    static func closed(_ message: String, closeCode: UInt16? = nil) -> ClientError {
        ClientError(code: .closed, message: message, closeCode: closeCode)
    }

    /// A ``ClientErrorCode/protocolViolation`` error.
    static func protocolViolation(_ message: String) -> ClientError {
        ClientError(code: .protocolViolation, message: message)
    }

    /// A ``ClientErrorCode/timeout`` error.
    static func timeout(_ message: String) -> ClientError {
        ClientError(code: .timeout, message: message)
    }
}
