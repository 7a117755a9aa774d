import SignalProtocol
import SignalSystem

/// A tiny HTTP/1.1 response reader over a ``TCPSocket``, for the WebSocket
/// upgrade and the REST client: the head, then a `Content-Length` body or
/// everything up to the end of the stream.
struct HTTPResponseReader {
    /// The most head bytes accepted.
    static let maxHeadBytes = 16 * 1024
    /// The most body bytes accepted.
    static let maxBodyBytes = 1024 * 1024

    private let socket: TCPSocket
    /// Bytes received and not consumed yet.
    private(set) var buffered: [UInt8] = []

    /// A reader of `socket`.
    init(socket: TCPSocket) {
        self.socket = socket
    }

    /// Reads the status line and headers; what follows stays in ``buffered``.
    mutating func readHead(until deadline: Deadline) throws(ClientError) -> HTTPResponseHead {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var searchFrom = 0
        while true {
            if buffered.count >= 4, let end = (searchFrom ... buffered.count - 4).first(where: {
                buffered[$0] == 13 && buffered[$0 ..< $0 + 4].elementsEqual(terminator)
            }) {
                let head = Array(buffered[0 ..< end])
                buffered.removeFirst(end + 4)
                do {
                    return try HTTPResponseHead.parse(head)
                } catch {
                    throw .protocolViolation(error.message)
                }
            }
            searchFrom = max(0, buffered.count - 3)
            guard buffered.count <= Self.maxHeadBytes else {
                throw .protocolViolation("the HTTP response head exceeds \(Self.maxHeadBytes) bytes")
            }
            try fill(until: deadline, what: "the HTTP response head")
        }
    }

    /// Reads the body: `Content-Length` bytes, or up to the end of the stream without one.
    mutating func readBody(of head: HTTPResponseHead, until deadline: Deadline) throws(ClientError) -> [UInt8] {
        if head.status == 204 || head.status == 304 || (100 ..< 200).contains(head.status) { return [] }
        guard let lengthText = head.value("Content-Length") else {
            while true {
                guard buffered.count <= Self.maxBodyBytes else { throw .protocolViolation("the HTTP body is too large") }
                do {
                    try socket.receive(into: &buffered, until: deadline)
                } catch .endOfStream {
                    defer { buffered = [] }
                    return buffered
                } catch {
                    throw Self.clientError(error, what: "the HTTP body")
                }
            }
        }
        guard let length = Int(lengthText), (0 ... Self.maxBodyBytes).contains(length) else {
            throw .protocolViolation("bad Content-Length \"\(lengthText)\"")
        }
        while buffered.count < length {
            try fill(until: deadline, what: "the HTTP body")
        }
        defer { buffered.removeFirst(length) }
        return Array(buffered[0 ..< length])
    }

    private mutating func fill(until deadline: Deadline, what: String) throws(ClientError) {
        do {
            try socket.receive(into: &buffered, until: deadline)
        } catch {
            throw Self.clientError(error, what: what)
        }
    }

    private static func clientError(_ failure: SocketFailure, what: String) -> ClientError {
        switch failure {
        case .endOfStream: return .closed("the server closed the connection before \(what) was complete")
        case .timedOut: return .timeout("timed out waiting for \(what)")
        case .system(let error): return .closed("reading \(what): \(error)")
        case .tls(let error): return .closed("reading \(what): \(error.message)")
        }
    }

    /// The server's error message from a JSON error body
    /// (`{"error":{"code":…,"message":…}}`), or the body's text.
    static func errorMessage(in body: [UInt8]) -> (code: String?, message: String) {
        if let json = try? JSONValue.parse(body), let error = json["error"] {
            return (error["code"]?.stringValue, error["message"]?.stringValue ?? "")
        }
        return (nil, String(decoding: body.prefix(200), as: UTF8.self))
    }
}
