/// HTTP header fields in arrival order, looked up case-insensitively.
public struct HTTPHeaders: Sendable, Sequence {
    private var fields: [(name: String, value: String)] = []

    public init() {}

    /// Fields from `name`/`value` pairs.
    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// Appends a field.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Every value of `name`, in order (names compared ASCII case-insensitively,
    /// without allocating).
    public func values(_ name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Whether two field names are equal ignoring ASCII case (RFC 9110 §5.1).
    private static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count
            && zip(lhs.utf8, rhs.utf8).allSatisfy { $0 | 0x20 == $1 | 0x20 && ($0 == $1 || isLetter($0)) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a") ... UInt8(ascii: "z")).contains(byte | 0x20)
    }

    /// The single value of `name`; nil when absent. Repeated fields are
    /// joined with ", " as RFC 9110 §5.3 allows for list-valued fields.
    public subscript(name: String) -> String? {
        let found = values(name)
        return found.isEmpty ? nil : found.joined(separator: ", ")
    }

    /// The comma-separated tokens of every `name` field, trimmed and lowercased.
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingWhitespace().lowercased() }
            .filter { !$0.isEmpty }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs. `package`:
    /// the server trims configuration values and tokens the same way.
    package func trimmingWhitespace() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return String(self[first ... last])
    }
}
