/// RFC 9110 §5.6.2 tokens: header names, methods, extension names.
public enum HTTPToken {
    /// Whether `byte` is a `tchar`: a letter, a digit, or one of ``symbols``.
    @inlinable
    public static func isTokenByte(_ byte: UInt8) -> Bool { table[Int(byte)] }

    /// The punctuation allowed in a token.
    public static let symbols = "!#$%&'*+-.^_`|~"

    /// One flag per byte value, so that the parsers' check is a load.
    @usableFromInline
    static let table: [Bool] = (0 ... 255).map { value in
        let byte = UInt8(value)
        switch byte {
        case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "A") ... UInt8(ascii: "Z"),
            UInt8(ascii: "0") ... UInt8(ascii: "9"):
            return true
        default:
            return symbols.utf8.contains(byte)
        }
    }
}
