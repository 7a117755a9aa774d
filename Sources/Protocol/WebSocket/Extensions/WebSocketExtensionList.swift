/// One element of a `Sec-WebSocket-Extensions` header: an extension name and
/// its parameters in order (RFC 6455 §9.1).
public struct WebSocketExtension: Hashable, Sendable {
    /// One `name` or `name=value` parameter.
    public struct Parameter: Hashable, Sendable {
        /// The parameter name, lowercased.
        public var name: String
        /// The value, unquoted; nil when the parameter has none.
        public var value: String?

        public init(_ name: String, _ value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    /// The extension token, lowercased.
    public var name: String
    /// The parameters in the order they were written.
    public var parameters: [Parameter]

    public init(_ name: String, _ parameters: [Parameter] = []) {
        self.name = name
        self.parameters = parameters
    }

    /// Parses every `Sec-WebSocket-Extensions` field value (several fields
    /// form one list) into extensions, skipping empty list elements.
    /// Quoted values must unquote to a token (RFC 6455 §9.1).
    public static func parseList(_ fieldValues: [String]) throws(WebSocketExtensionError) -> [WebSocketExtension] {
        var extensions: [WebSocketExtension] = []
        for value in fieldValues {
            var scanner = HeaderScanner(Array(value.utf8))
            while true {
                scanner.skipWhitespace()
                if scanner.atEnd { break }
                if scanner.take(UInt8(ascii: ",")) { continue }
                extensions.append(try scanner.extensionElement())
                scanner.skipWhitespace()
                guard scanner.atEnd || scanner.take(UInt8(ascii: ",")) else {
                    throw WebSocketExtensionError(.malformedHeader, "expected \",\" or \";\" after an extension")
                }
            }
        }
        return extensions
    }

    /// The header form: `name; param; param=value`.
    public var headerValue: String {
        var text = name
        for parameter in parameters {
            text += "; " + parameter.name
            if let value = parameter.value { text += "=" + value }
        }
        return text
    }
}

/// Reads one `Sec-WebSocket-Extensions` field value byte by byte.
struct HeaderScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
            index += 1
        }
    }

    /// Consumes `byte` when it comes next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// `extension-token *( ";" extension-param )`.
    mutating func extensionElement() throws(WebSocketExtensionError) -> WebSocketExtension {
        let name = try token(what: "an extension name")
        var parameters: [WebSocketExtension.Parameter] = []
        while true {
            skipWhitespace()
            guard take(UInt8(ascii: ";")) else { break }
            skipWhitespace()
            let parameter = try token(what: "a parameter name of \(name)")
            skipWhitespace()
            guard take(UInt8(ascii: "=")) else {
                parameters.append(.init(parameter))
                continue
            }
            skipWhitespace()
            let value =
                index < bytes.count && bytes[index] == UInt8(ascii: "\"")
                ? try quotedToken(parameter) : try token(what: "a value for \(parameter)")
            parameters.append(.init(parameter, value))
        }
        return WebSocketExtension(name, parameters)
    }

    /// A token (RFC 9110 §5.6.2), lowercased.
    private mutating func token(what: String) throws(WebSocketExtensionError) -> String {
        let start = index
        while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
        guard index > start else { throw WebSocketExtensionError(.malformedHeader, "expected \(what)") }
        return String(decoding: bytes[start ..< index], as: UTF8.self).lowercased()
    }

    /// A quoted-string whose unescaped content must be a token.
    private mutating func quotedToken(_ parameter: String) throws(WebSocketExtensionError) -> String {
        index += 1
        var content: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            if bytes[index] == UInt8(ascii: "\\") { index += 1 }
            guard index < bytes.count else { break }
            content.append(bytes[index])
            index += 1
        }
        guard take(UInt8(ascii: "\"")) else {
            throw WebSocketExtensionError(.malformedHeader, "unterminated quoted value for \(parameter)")
        }
        guard !content.isEmpty, content.allSatisfy(Self.isTokenByte) else {
            throw WebSocketExtensionError(.malformedHeader, "the quoted value of \(parameter) is not a token")
        }
        return String(decoding: content, as: UTF8.self).lowercased()
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool { HTTPToken.isTokenByte(byte) }
}
