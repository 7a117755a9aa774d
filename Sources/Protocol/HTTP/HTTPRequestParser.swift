/// Why a request was refused before it reached a route.
public struct HTTPParseError: Error, Sendable, CustomStringConvertible {
    /// The status to answer with (400, 413, 431, 501 or 505).
    public let status: HTTPStatus
    public let message: String

    public var description: String { "\(status.code) \(message)" }
}

/// An incremental HTTP/1.1 request parser (RFC 9112), correct for any split
/// of the byte stream. Limits apply as soon as they can be judged: the header
/// block may not exceed ``maxHeaderBytes`` (431) and a declared body may not
/// exceed ``maxBodyBytes`` (413).
public struct HTTPRequestParser: Sendable {
    /// Where the parser stands.
    enum State: Sendable {
        /// Collecting the request line and header fields; `scanned` bytes of
        /// the buffer are known to hold no end of the header block.
        case head(scanned: Int)
        /// The head is parsed; `length` body bytes are due.
        case body(HTTPRequest, length: Int)
        /// A parse error was reported; nothing more is parsed.
        case failed
    }

    /// The largest header block (request line plus fields) accepted.
    public let maxHeaderBytes: Int
    /// The largest body accepted.
    public let maxBodyBytes: Int
    private var state: State = .head(scanned: 0)
    private var buffer: [UInt8] = []
    /// Bytes of the current request's method checked so far; nil once the
    /// space after it was seen.
    private var methodChecked: Int? = 0

    public init(maxHeaderBytes: Int = 8192, maxBodyBytes: Int) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Whether part of a request has arrived but not all of it.
    public var hasPartialRequest: Bool {
        if case .body = state { return true }
        return !buffer.isEmpty
    }

    /// Bytes appended and not yet taken by a parsed request.
    public var bufferedByteCount: Int { buffer.count }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    public mutating func append<Bytes: Sequence<UInt8>>(contentsOf bytes: Bytes) {
        buffer.append(contentsOf: bytes)
    }

    /// Takes the bytes after the last parsed request (handed to the WebSocket
    /// layer on upgrade).
    public mutating func takeBufferedBytes() -> [UInt8] {
        defer { buffer = [] }
        return buffer
    }

    /// The next complete request, nil when more bytes are needed.
    public mutating func next() throws(HTTPParseError) -> HTTPRequest? {
        switch state {
        case .failed:
            return nil
        case .head(let scanned):
            skipLeadingEmptyLines()
            try checkMethodPrefix()
            guard let end = findEndOfHead(from: scanned) else {
                if shortestPossibleHead > maxHeaderBytes {
                    throw fail(.headersTooLarge, "header block exceeds \(maxHeaderBytes) bytes")
                }
                state = .head(scanned: max(0, buffer.count - 3))
                return nil
            }
            guard end.headLength <= maxHeaderBytes else {
                throw fail(.headersTooLarge, "header block exceeds \(maxHeaderBytes) bytes")
            }
            let request = try parseHead(buffer[0 ..< end.headLength])
            buffer.removeFirst(end.consumed)
            methodChecked = 0
            let length = try bodyLength(request)
            state = .body(request, length: length)
            return try next()
        case .body(var request, let length):
            guard buffer.count >= length else { return nil }
            request.body = Array(buffer[0 ..< length])
            buffer.removeFirst(length)
            state = .head(scanned: 0)
            return request
        }
    }

    private mutating func fail(_ status: HTTPStatus, _ message: String) -> HTTPParseError {
        state = .failed
        return HTTPParseError(status: status, message: message)
    }

    /// The length of the shortest head the buffered bytes can still become:
    /// a trailing LF or LF CR may already be part of the final empty line,
    /// which does not count towards the limit. Judging by this keeps the
    /// limit independent of how the bytes were split.
    private var shortestPossibleHead: Int {
        let count = buffer.count
        if count >= 2 && buffer[count - 2] == 0x0A && buffer[count - 1] == 0x0D { return count - 1 }
        if count >= 1 && buffer[count - 1] == 0x0A { return count }
        return count + 1
    }

    /// Refuses at once bytes that cannot begin a request line (the method is
    /// a token), rather than waiting for a line end that may never come or
    /// reading a line end into binary bytes: a TLS handshake sent to a
    /// plain-text port, for one. Each byte is checked once.
    private mutating func checkMethodPrefix() throws(HTTPParseError) {
        guard let checked = methodChecked else { return }
        for byte in buffer[checked...] {
            if byte == UInt8(ascii: " ") {
                methodChecked = nil
                return
            }
            methodChecked = (methodChecked ?? 0) + 1
            guard Self.isTokenByte(byte) else {
                // 22 starts a TLS handshake record.
                throw fail(
                    .badRequest,
                    buffer.first == 22
                        ? "a TLS handshake on a plain-text port: use ws:// or http://"
                        : "invalid method")
            }
        }
    }

    /// RFC 9112 §2.2: ignore empty lines before the request line.
    private mutating func skipLeadingEmptyLines() {
        var index = 0
        while index < buffer.count, buffer[index] == 0x0D || buffer[index] == 0x0A { index += 1 }
        if index > 0 { buffer.removeFirst(index) }
    }

    /// Finds the empty line ending the head: LF LF or LF CR LF. Returns the
    /// head's length (without the empty line) and the bytes it consumed.
    private func findEndOfHead(from start: Int) -> (headLength: Int, consumed: Int)? {
        var index = max(start, 1)
        while index < buffer.count {
            if buffer[index] == 0x0A {
                if buffer[index - 1] == 0x0A { return (index, index + 1) }
                if index >= 2, buffer[index - 1] == 0x0D, buffer[index - 2] == 0x0A { return (index - 1, index + 1) }
            }
            index += 1
        }
        return nil
    }

    private mutating func parseHead(_ head: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPRequest {
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard let requestLine = lines.first else { throw fail(.badRequest, "empty request") }
        var request = try parseRequestLine(requestLine)
        for line in lines.dropFirst() {
            let (name, value) = try parseField(line)
            request.headers.add(name, value)
        }
        if request.minorVersion >= 1 && request.headers.values("Host").count != 1 {
            throw fail(.badRequest, "an HTTP/1.1 request needs exactly one Host header")
        }
        return request
    }

    private mutating func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPRequest {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw fail(.badRequest, "malformed request line")
        }
        guard parts[0].allSatisfy(Self.isTokenByte) else { throw fail(.badRequest, "invalid method") }
        guard parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw fail(.badRequest, "invalid request target") }
        let version = Array(parts[2])
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)), version[6] == UInt8(ascii: "."),
            let major = Self.digit(version[5]), let minor = Self.digit(version[7])
        else {
            throw fail(.badRequest, "malformed HTTP version")
        }
        // Checked before the target: a request in a version ringd does not
        // speak may not follow HTTP/1.1's rules there either. HTTP/1.2 is no
        // version at all, so it is refused too rather than served as 1.1.
        guard major == 1, minor <= 1 else {
            throw fail(.versionNotSupported, "only HTTP/1.0 and HTTP/1.1 are supported")
        }
        let target = String(decoding: parts[1], as: UTF8.self)
        guard target.hasPrefix("/") || target == "*" || Self.isAbsoluteForm(target) else {
            throw fail(.badRequest, "request target must be in origin form (/path) or absolute form (http://host/path)")
        }
        return HTTPRequest(
            method: String(decoding: parts[0], as: UTF8.self), target: Self.originForm(of: target),
            minorVersion: minor, headers: HTTPHeaders(), body: [])
    }

    /// Whether `target` is an absolute-form `http` or `https` URI with a host
    /// and no userinfo (RFC 9110 §4.2.4 forbids it in these schemes). A
    /// server must accept this form (RFC 9112 §3.2.2), though clients send it
    /// mostly to proxies.
    private static func isAbsoluteForm(_ target: String) -> Bool {
        guard let (scheme, rest) = schemeAndRest(target), scheme == "http" || scheme == "https" else { return false }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        return !authority.isEmpty && !authority.contains("@")
    }

    /// The origin form (path and query) of a target: an origin-form or `*`
    /// target as it is; an absolute-form one without scheme and authority,
    /// "/" standing for an empty path (RFC 9110 §4.2.3). The Host header is
    /// still required of HTTP/1.1, and nothing routes on the host, so it is
    /// not taken from the target either.
    private static func originForm(of target: String) -> String {
        guard !target.hasPrefix("/"), target != "*", let (_, rest) = schemeAndRest(target) else { return target }
        let path = rest.drop { $0 != "/" && $0 != "?" }
        return path.first == "/" ? String(path) : "/" + path
    }

    /// The lowercased scheme of `scheme://rest`, and `rest`. The standard
    /// library's `firstRange(of:)`, as this module imports no Foundation;
    /// the target is printable ASCII, so it finds what `range(of:)` did.
    private static func schemeAndRest(_ target: String) -> (String, Substring)? {
        guard let separator = target.firstRange(of: "://") else { return nil }
        return (target[..<separator.lowerBound].lowercased(), target[separator.upperBound...])
    }

    private mutating func parseField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String) {
        guard let first = line.first, first != 0x20, first != 0x09 else {
            throw fail(.badRequest, "obsolete line folding is not accepted")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw fail(.badRequest, "header field without ':'")
        }
        let name = line[line.startIndex ..< colon]
        guard !name.isEmpty, name.allSatisfy(Self.isTokenByte) else {
            throw fail(.badRequest, "invalid header field name")
        }
        let value = line[(colon + 1)...]
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw fail(.badRequest, "invalid character in header field \(String(decoding: name, as: UTF8.self))")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self).trimmingWhitespace())
    }

    private mutating func bodyLength(_ request: HTTPRequest) throws(HTTPParseError) -> Int {
        if !request.headers.values("Transfer-Encoding").isEmpty {
            if request.headers["Content-Length"] != nil {
                throw fail(.badRequest, "both Transfer-Encoding and Content-Length")
            }
            throw fail(.notImplemented, "Transfer-Encoding is not supported; send Content-Length")
        }
        let lengths = Set(
            request.headers.values("Content-Length").flatMap { $0.split(separator: ",") }
                .map { $0.trimmingWhitespace() })
        guard let text = lengths.first else {
            if request.headers["Content-Length"] != nil { throw fail(.badRequest, "invalid Content-Length") }
            return 0
        }
        guard lengths.count == 1, !text.isEmpty, text.utf8.allSatisfy({ Self.digit($0) != nil }) else {
            throw fail(.badRequest, "invalid Content-Length")
        }
        guard text.count <= 18, let length = Int(text), length <= maxBodyBytes else {
            throw fail(.contentTooLarge, "body exceeds \(maxBodyBytes) bytes")
        }
        return length
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool { HTTPToken.isTokenByte(byte) }

    private static func digit(_ byte: UInt8) -> Int? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte - UInt8(ascii: "0")) : nil
    }
}
