import SignalCrypto
import SignalProtocol
import SignalReactor
import SignalSystem

/// One HTTP/1.1 request and its response over a connection of its own
/// (`Connection: close`), on the client I/O loop, within a timeout for the
/// whole exchange.
final class HTTPExchange: ClientSocketDelegate {
    private let request: [UInt8]
    private let timeout: Double
    private var response = HTTPResponseBuffer()
    private var completion: (@Sendable (Result<(HTTPResponseHead, [UInt8]), ClientError>) -> Void)?
    private var socket: ClientSocket?
    private var deadline: TimerID?

    private init(
        request: [UInt8], timeout: Double,
        completion: @escaping @Sendable (Result<(HTTPResponseHead, [UInt8]), ClientError>) -> Void
    ) {
        self.request = request
        self.timeout = timeout
        self.completion = completion
    }

    /// Sends `request` to `endpoint` and returns the response's head and body.
    static func send(
        _ request: [UInt8], to endpoint: ServerEndpoint, verification: TLSVerification,
        timeout: Double
    ) async throws(ClientError) -> (HTTPResponseHead, [UInt8]) {
        try await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<(HTTPResponseHead, [UInt8]), ClientError>, Never>) in
            ClientIO.resolve(endpoint) { resolved in
                switch resolved {
                case .failure(let error):
                    continuation.resume(returning: .failure(error))
                case .success(let (loop, addresses)):
                    let exchange = HTTPExchange(request: request, timeout: timeout) {
                        continuation.resume(returning: $0)
                    }
                    exchange.deadline = loop.schedule(after: timeout) { [weak exchange] in
                        exchange?.finish(.failure(.timeout("timed out waiting for the HTTP response")))
                    }
                    exchange.socket = ClientSocket(
                        to: addresses, of: endpoint, verification: verification,
                        timeout: timeout, on: loop, delegate: exchange)
                }
            }
        }.get()
    }

    func socketDidConnect(_ socket: ClientSocket) {
        socket.write(request)
    }

    func socket(_ socket: ClientSocket, didRead bytes: UnsafeRawBufferPointer) {
        do {
            try response.append(bytes)
            if let head = response.head, let body = try response.body(ended: false) { finish(.success((head, body))) }
        } catch {
            finish(.failure(error))
        }
    }

    func socket(_ socket: ClientSocket, didEnd ending: SocketEnding) {
        self.socket = nil
        switch ending {
        case .connectFailed(let error):
            return finish(.failure(error))
        case .system(let error):
            return finish(.failure(.closed("reading the HTTP response: \(error)")))
        case .tls(let error):
            return finish(.failure(.closed("reading the HTTP response: \(error.message)")))
        case .endOfStream, .closed:
            break
        }
        do {
            guard let head = response.head else {
                return finish(
                    .failure(.closed("the server closed the connection before the HTTP response head was complete")))
            }
            guard let body = try response.body(ended: true) else {
                return finish(.failure(.closed("the server closed the connection before the HTTP body was complete")))
            }
            finish(.success((head, body)))
        } catch {
            finish(.failure(error))
        }
    }

    private func finish(_ result: Result<(HTTPResponseHead, [UInt8]), ClientError>) {
        guard let completion = completion.take() else { return }
        if let deadline { socket?.loop.cancel(deadline) }
        socket?.close()
        completion(result)
    }
}

extension HTTPExchange {
    /// One JSON request on a fresh connection (`Connection: close`) with
    /// extra `headers`; a status other than `expecting` throws
    /// ``ClientErrorCode/http`` with the server's message. An empty body reads as null.
    static func json(
        _ method: String, _ path: String, body: JSONValue? = nil, headers: [(String, String)] = [],
        to endpoint: ServerEndpoint, verification: TLSVerification, timeout: Double,
        expecting status: Int
    ) async throws(ClientError) -> JSONValue {
        var head =
            "\(method) \(path) HTTP/1.1\r\nHost: \(endpoint.hostAndPort)\r\nConnection: close\r\n"
            + "Accept: application/json\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        var payload: [UInt8] = []
        body?.write(into: &payload)
        if body != nil || method == "POST" {
            head += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n"
        }
        let request = Array((head + "\r\n").utf8) + payload
        let (responseHead, responseBody) = try await send(
            request, to: endpoint, verification: verification, timeout: timeout)
        guard responseHead.status == status else {
            let message = HTTPResponseBuffer.errorMessage(in: responseBody).message
            throw ClientError(
                code: .http,
                message: message.isEmpty ? "HTTP \(responseHead.status) \(responseHead.reason)" : message,
                httpStatus: responseHead.status)
        }
        guard !responseBody.isEmpty else { return .null }
        do {
            return try JSONValue.parse(responseBody)
        } catch {
            throw .protocolViolation("the response body is not JSON: \(error)")
        }
    }
}
