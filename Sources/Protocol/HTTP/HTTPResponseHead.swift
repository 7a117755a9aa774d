/// An HTTP/1.1 response's status line and header fields, as a client reads
/// them (the WebSocket upgrade, the REST API).
public struct HTTPResponseHead: Sendable {
    public var status: Int
    public var reason: String
    /// The header fields in order.
    public var headers: [(name: String, value: String)]

    public init(status: Int, reason: String, headers: [(name: String, value: String)]) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// Parses the head's bytes, without the blank line that ends it; throws
    /// a message naming the line that is malformed.
    public static func parse(_ bytes: some Collection<UInt8>) throws(HTTPResponseHeadError) -> HTTPResponseHead {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.isEmpty ? "" : lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]) else {
            throw HTTPResponseHeadError(message: "malformed HTTP status line \"\(statusLine)\"")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw HTTPResponseHeadError(message: "malformed HTTP header line \"\(line)\"")
            }
            headers.append((String(line[..<colon]), trimmingWhitespace(line[line.index(after: colon)...])))
        }
        return HTTPResponseHead(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
    }

    /// The first value of header `name`, compared case-insensitively.
    public func value(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value of header `name`, in order, compared case-insensitively.
    public func values(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The comma-separated tokens of every `name` header, lowercased.
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { trimmingWhitespace($0).lowercased() }
    }
}

/// A response head that is not HTTP/1.1.
public struct HTTPResponseHeadError: Error, Hashable, Sendable {
    public let message: String
}

/// `text` without the spaces and tabs around it (optional white space, RFC 9110 §5.6.3).
private func trimmingWhitespace(_ text: Substring) -> String {
    String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
}
