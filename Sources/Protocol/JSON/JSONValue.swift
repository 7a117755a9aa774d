/// A JSON value (RFC 8259). Objects keep their members in document order.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits 64 bits.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// An object, members in document order.
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .integer(let value): hasher.combine(value)
        case .double(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let values): hasher.combine(values)
        case .object(let members):
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }

    /// The member named `key` of an object (the last one if repeated); nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is a number with an exact 64-bit integer value.
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9.2e18: return Int64(value)
        default: return nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var objectMembers: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// How deeply arrays and objects nest: 0 for a scalar, 1 for a flat array or object.
    public var depth: Int {
        switch self {
        case .array(let values): return 1 + (values.map(\.depth).max() ?? 0)
        case .object(let members): return 1 + (members.map(\.value.depth).max() ?? 0)
        default: return 0
        }
    }
}
