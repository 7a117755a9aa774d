/// Base64 (RFC 4648 §4) encoding and strict decoding.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The padded base64 text of `bytes`.
    public static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next(), third = iterator.next()
            let value = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(second == nil ? UInt8(ascii: "=") : alphabet[Int(value >> 6 & 63)])
            out.append(third == nil ? UInt8(ascii: "=") : alphabet[Int(value & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of padded base64 `text`; nil unless it is canonical base64
    /// (length a multiple of 4, padding only at the end, unused bits zero).
    public static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            var value: UInt32 = 0
            var padding = 0
            for offset in 0 ..< 4 {
                let byte = input[index + offset]
                if byte == UInt8(ascii: "=") {
                    guard isLast, offset >= 2 else { return nil }
                    padding += 1
                    value <<= 6
                    continue
                }
                guard padding == 0, let digit = sextet(byte) else { return nil }
                value = value << 6 | UInt32(digit)
            }
            out.append(UInt8(value >> 16 & 0xFF))
            if padding < 2 { out.append(UInt8(value >> 8 & 0xFF)) } else if value & 0xFFFF != 0 { return nil }
            if padding < 1 { out.append(UInt8(value & 0xFF)) } else if value & 0xFF != 0 { return nil }
            index += 4
        }
        return out
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A") ... UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a") ... UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }

    /// The unpadded base64url text (RFC 4648 §5) of `bytes`, for tokens and cursors.
    public static func encodeURL<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        String(
            encode(bytes).compactMap { character -> Character? in
                switch character {
                case "+": return "-"
                case "/": return "_"
                case "=": return nil
                default: return character
                }
            })
    }

    /// The bytes of unpadded base64url `text`; nil unless it is canonical.
    public static func decodeURL(_ text: String) -> [UInt8]? {
        guard !text.contains(where: { $0 == "+" || $0 == "/" || $0 == "=" }) else { return nil }
        var standard = String(text.map { $0 == "-" ? "+" : ($0 == "_" ? "/" : $0) })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return decode(standard)
    }
}
