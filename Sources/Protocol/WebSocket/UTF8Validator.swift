/// An incremental UTF-8 validator (RFC 3629) that fails at the first byte
/// that cannot continue a well-formed sequence, even when the sequence is cut
/// across chunks or WebSocket fragments.
///
/// Rejects overlong forms, UTF-16 surrogates (U+D800–U+DFFF) and code points
/// above U+10FFFF.
public struct UTF8Validator: Sendable {
    /// Where the validator stands between two bytes.
    enum State: Sendable, Equatable {
        /// At a character boundary: the next byte starts a character.
        case boundary
        /// Inside a multi-byte character: `remaining` continuation bytes are due,
        /// and the next one must lie in `lower...upper` (narrower than 0x80...0xBF
        /// only for the second byte of E0, ED, F0 and F4 sequences).
        case inside(remaining: UInt8, lower: UInt8, upper: UInt8)
        /// An invalid byte was seen; the validator stays here.
        case invalid
    }

    private(set) var state: State = .boundary

    /// A validator at a character boundary.
    public init() {}

    /// True when every byte fed so far forms complete, valid characters.
    public var isAtBoundary: Bool { state == .boundary }

    /// True once an invalid byte was seen.
    public var hasFailed: Bool { state == .invalid }

    /// Feeds `bytes`; returns false at the first byte that makes the input invalid.
    @discardableResult
    public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        for byte in bytes where !step(byte) {
            return false
        }
        return state != .invalid
    }

    /// Feeds raw memory; returns false at the first invalid byte.
    @discardableResult
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        feed(bytes.bindMemory(to: UInt8.self))
    }

    /// Validates a whole, self-contained byte sequence.
    public static func isValid<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        firstInvalidOffset(bytes) == nil
    }

    /// The offset of the first byte that makes `bytes` invalid UTF-8 (the
    /// count of bytes when they end inside a character); nil when valid.
    public static func firstInvalidOffset<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Int? {
        var validator = UTF8Validator()
        var offset = 0
        for byte in bytes {
            guard validator.step(byte) else { return offset }
            offset += 1
        }
        return validator.isAtBoundary ? nil : offset
    }

    /// Consumes one byte; on an invalid one moves to `.invalid` and returns false.
    private mutating func step(_ byte: UInt8) -> Bool {
        let valid = advance(byte)
        if !valid { state = .invalid }
        return valid
    }

    private mutating func advance(_ byte: UInt8) -> Bool {
        switch state {
        case .invalid:
            return false
        case .boundary:
            switch byte {
            case 0x00 ... 0x7F: return true
            case 0xC2 ... 0xDF: state = .inside(remaining: 1, lower: 0x80, upper: 0xBF)
            case 0xE0: state = .inside(remaining: 2, lower: 0xA0, upper: 0xBF)
            case 0xE1 ... 0xEC, 0xEE ... 0xEF: state = .inside(remaining: 2, lower: 0x80, upper: 0xBF)
            case 0xED: state = .inside(remaining: 2, lower: 0x80, upper: 0x9F)
            case 0xF0: state = .inside(remaining: 3, lower: 0x90, upper: 0xBF)
            case 0xF1 ... 0xF3: state = .inside(remaining: 3, lower: 0x80, upper: 0xBF)
            case 0xF4: state = .inside(remaining: 3, lower: 0x80, upper: 0x8F)
            default: return false
            }
            return true
        case .inside(let remaining, let lower, let upper):
            guard byte >= lower && byte <= upper else { return false }
            state = remaining == 1 ? .boundary : .inside(remaining: remaining - 1, lower: 0x80, upper: 0xBF)
            return true
        }
    }
}
