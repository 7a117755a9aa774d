import SignalProtocol

/// An HTTP/1.1 response arriving in pieces, for the WebSocket upgrade and
/// the REST client: the head, then a `Content-Length` body or everything
/// up to the end of the stream.
struct HTTPResponseBuffer {
    static let maxHeadBytes = 16 * 1024
    static let maxBodyBytes = 1024 * 1024

    /// The head, once it is complete.
    private(set) var head: HTTPResponseHead?
    /// Bytes after the head (the body so far, or a WebSocket's first frames).
    private(set) var rest: [UInt8] = []
    private var headBytes: [UInt8] = []

    /// Adds received bytes; throws when the head is malformed or a part is too large.
    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(ClientError) {
        guard head == nil else {
            rest.append(contentsOf: bytes)
            guard rest.count <= Self.maxBodyBytes else { throw .protocolViolation("the HTTP body is too large") }
            return
        }
        let searchFrom = max(0, headBytes.count - 3)
        headBytes.append(contentsOf: bytes)
        guard let end = Self.endOfHead(in: headBytes, from: searchFrom) else {
            guard headBytes.count <= Self.maxHeadBytes else {
                throw .protocolViolation("the HTTP response head exceeds \(Self.maxHeadBytes) bytes")
            }
            return
        }
        do {
            head = try HTTPResponseHead.parse(headBytes[..<end])
        } catch {
            throw .protocolViolation(error.message)
        }
        rest = Array(headBytes[(end + 4)...])
        headBytes = []
    }

    /// The body, once it is complete: `Content-Length` bytes, none for a
    /// status without one, or (`ended`: the stream is over) all that came.
    func body(ended: Bool) throws(ClientError) -> [UInt8]? {
        guard let head else { return nil }
        if head.status == 204 || head.status == 304 || (100 ..< 200).contains(head.status) { return [] }
        guard let lengthText = head.value("Content-Length") else { return ended ? rest : nil }
        guard let length = Int(lengthText), (0 ... Self.maxBodyBytes).contains(length) else {
            throw .protocolViolation("bad Content-Length \"\(lengthText)\"")
        }
        return rest.count >= length ? Array(rest.prefix(length)) : nil
    }

    private static func endOfHead(in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (start ... bytes.count - 4).first { index in
            bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10
        }
    }

    /// The server's error from a JSON error body
    /// (`{"error":{"code":…,"message":…}}`), or else the start of the body
    /// as one line: something that is not ringd (a web server's HTML page)
    /// must not fill the terminal.
    static func errorMessage(in body: [UInt8]) -> (code: String?, message: String) {
        if let json = try? JSONValue.parse(body), let error = json["error"] {
            return (error["code"]?.stringValue, error["message"]?.stringValue ?? "")
        }
        let words = String(decoding: body.prefix(400), as: UTF8.self).split(whereSeparator: { $0.isWhitespace })
        let line = words.joined(separator: " ")
        if line.hasPrefix("<") { return (nil, "an HTML page, not ringd's JSON (is this ringd?)") }
        return (nil, line.count > 120 ? String(line.prefix(120)) + "…" : line)
    }
}
