/// A parsed HTTP/1.x request.
public struct HTTPRequest: Sendable {
    /// The method token, e.g. `GET`.
    public var method: String
    /// The request target as sent (origin form: path and query).
    public var target: String
    /// The minor version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    public var minorVersion: Int
    public var headers: HTTPHeaders
    /// The body (empty without `Content-Length`).
    public var body: [UInt8]

    /// The path part of the target, without the query.
    public var path: String {
        String(target.prefix { $0 != "?" })
    }

    /// The value of the query parameter `name` (the first one).
    public func queryValue(_ name: String) -> String? {
        query.first(where: { $0.name == name })?.value
    }

    /// The query parameters, percent-decoded, in order.
    public var query: [(name: String, value: String)] {
        guard let mark = target.firstIndex(of: "?") else { return [] }
        return target[target.index(after: mark)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (
                Self.percentDecode(parts[0], plusIsSpace: true),
                parts.count > 1 ? Self.percentDecode(parts[1], plusIsSpace: true) : ""
            )
        }
    }

    /// Whether a proxy says it forwarded the request: a `Forwarded` (RFC
    /// 7239), `X-Forwarded-For` or `X-Real-IP` header. The client may have
    /// added one itself; what this tells is only that one may be elsewhere.
    public var cameThroughProxy: Bool {
        headers["Forwarded"] != nil || headers["X-Forwarded-For"] != nil || headers["X-Real-IP"] != nil
    }

    /// Whether the connection stays open after the response (RFC 9112 §9.3).
    public var keepAlive: Bool {
        let options = headers.tokens("Connection")
        if options.contains("close") { return false }
        return minorVersion >= 1 || options.contains("keep-alive")
    }

    /// `%XX` decoding (and `+` as a space in query strings); invalid escapes
    /// are kept as written. `package`: the server's router decodes path
    /// parameters with it.
    package static func percentDecode(_ text: Substring, plusIsSpace: Bool) -> String {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "+") && plusIsSpace {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), bytes.count >= 2,
                let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            {
                out.append(value)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
