/// An HTTP response to serialize.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    /// Header fields besides `Content-Length` and `Connection`, which are added when sending.
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(
        _ status: HTTPStatus, _ value: JSONValue, headers: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var all = headers
        all.add("Content-Type", "application/json")
        var body: [UInt8] = []
        value.write(into: &body)
        body.append(UInt8(ascii: "\n"))
        return HTTPResponse(status: status, headers: all, body: body)
    }

    /// `status` with the ringing protocol's code and message
    /// (`ERR_VALIDATION`, `ERR_CALL_NOT_A_PART`…), as the WebSocket would
    /// answer, for REST routes that share the protocol's rules.
    public static func error(_ status: HTTPStatus, _ error: SignalError) -> HTTPResponse {
        json(
            status,
            .object([("error", .object([("code", .string(error.code.rawValue)), ("message", .string(error.message))]))])
        )
    }

    /// A JSON error body `{"error":{"code":…,"message":…}}` with the status's stable code.
    public static func error(
        _ status: HTTPStatus, _ message: String, headers: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        json(
            status,
            .object([("error", .object([("code", .string(status.errorCode)), ("message", .string(message))]))]),
            headers: headers)
    }

    /// The wire form. `Content-Length` is always sent except on 101 and 204;
    /// `Connection: close` when the connection will close.
    public func serialized(keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        for (name, value) in headers {
            head += "\(name): \(value)\r\n"
        }
        if status.code != 101 && status.code != 204 {
            head += "Content-Length: \(body.count)\r\n"
        }
        if !keepAlive && status.code != 101 {
            head += "Connection: close\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
