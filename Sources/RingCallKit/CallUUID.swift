/// The UUID CallKit knows a call by, as its canonical string
/// (`9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6D`, upper case as Foundation's
/// `UUID.uuidString` writes it).
///
/// An incoming call's UUID is derived from its session id, so that every
/// push and every server event of one call name the same CallKit call: a
/// second push of the same session (ringd pushes again after a restart)
/// finds the call already reported. ringd's session ids are 128 random bits
/// written as 32 hex digits, so those digits *are* the UUID's 16 bytes,
/// written 8-4-4-4-12. The RFC 4122 version and variant bits are left as
/// the session id has them: setting them would overwrite 6 of the 128 bits,
/// so two sessions could share a UUID and the UUID would no longer give the
/// session id back. CallKit treats the UUID as an opaque identifier and
/// checks neither.
///
/// A session id that is not 32 hex digits (ringd never makes one, but the
/// protocol calls them opaque) gets a 128-bit FNV-1a hash of its UTF-8: still
/// the same UUID for the same session every time.
public struct CallUUID: Hashable, Sendable, CustomStringConvertible {
    /// The canonical string, upper case.
    public let uuidString: String

    public var description: String { uuidString }

    /// The UUID of the incoming call with session id `sessionId`.
    public init(sessionId: String) {
        let digits = Array(sessionId.utf8)
        if digits.count == 32, digits.allSatisfy(Self.isHexDigit) {
            uuidString = Self.format(digits)
        } else {
            uuidString = Self.format(Self.hashDigits(of: digits))
        }
    }

    /// A UUID as the app or CallKit wrote it (an outgoing call's
    /// `CXStartCallAction.callUUID`); nil if `uuidString` is not one.
    public init?(uuidString: String) {
        let bytes = Array(uuidString.utf8)
        let dashes: Set = [8, 13, 18, 23]
        guard bytes.count == 36 else { return nil }
        for (index, byte) in bytes.enumerated() {
            guard dashes.contains(index) ? byte == UInt8(ascii: "-") : Self.isHexDigit(byte) else { return nil }
        }
        self.uuidString = uuidString.uppercased()
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30 ... 0x39).contains(byte) || (0x41 ... 0x46).contains(byte) || (0x61 ... 0x66).contains(byte)
    }

    /// 32 hex digits as 8-4-4-4-12, upper case.
    private static func format(_ digits: [UInt8]) -> String {
        var text = ""
        text.reserveCapacity(36)
        for (index, digit) in digits.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { text.append("-") }
            text.append(Character(Unicode.Scalar(digit)))
        }
        return text.uppercased()
    }

    /// The 32 hex digits of the 128-bit FNV-1a hash of `bytes`.
    private static func hashDigits(of bytes: [UInt8]) -> [UInt8] {
        // FNV-1a, 128 bits: offset basis 0x6C62272E07BB014262B821756295C58D,
        // prime 2^88 + 0x13B, computed on two 64-bit halves.
        var high: UInt64 = 0x6C62_272E_07BB_0142
        var low: UInt64 = 0x62B8_2175_6295_C58D
        for byte in bytes {
            low ^= UInt64(byte)
            // (high·2^64 + low) × (2^88 + 0x13B) mod 2^128.
            let (carry, product) = low.multipliedFullWidth(by: 0x13B)
            let newHigh = high &* 0x13B &+ carry &+ (low << 24)
            low = product
            high = newHigh
        }
        let hex = Array("0123456789abcdef".utf8)
        return [high, low].flatMap { half in
            (0 ..< 16).map { hex[Int((half >> (60 - 4 * UInt64($0))) & 0xF)] }
        }
    }
}
