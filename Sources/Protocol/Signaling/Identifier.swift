/// The rule for uids and device ids: 1–100 characters of `A-Z a-z 0-9 . _ - @`.
public enum Identifier {
    /// What a valid identifier looks like, for error messages.
    public static let rule = "1 to 100 characters of A-Z a-z 0-9 . _ - @"

    /// Whether `text` is a valid uid or device id (or, at most
    /// `maxLength` long, another name with the same characters).
    public static func isValid(_ text: String, maxLength: Int = 100) -> Bool {
        let bytes = text.utf8
        return (1 ... maxLength).contains(bytes.count)
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                    UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                    UInt8(ascii: "-"), UInt8(ascii: "@"):
                    return true
                default:
                    return false
                }
            }
    }
}
