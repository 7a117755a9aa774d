/// Byte scans over the server's compact JSON, enough to route a message
/// without parsing it: the server writes `"key":"value"` with no spaces.
enum JSONScan {
    /// Whether `needle` occurs in `payload`.
    static func has(_ needle: StaticString, in payload: [UInt8]) -> Bool {
        find(needle, in: payload) != nil
    }

    /// The string value of the first `"key":"…"` in `payload` (no escapes expected).
    static func string(_ keyQuoteColonQuote: StaticString, in payload: [UInt8]) -> String? {
        guard let start = find(keyQuoteColonQuote, in: payload) else { return nil }
        guard let end = payload[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: payload[start..<end], as: UTF8.self)
    }

    /// The index just past the first occurrence of `needle`.
    private static func find(_ needle: StaticString, in payload: [UInt8]) -> Int? {
        let count = needle.utf8CodeUnitCount
        return needle.withUTF8Buffer { pattern in
            payload.withUnsafeBufferPointer { bytes in
                guard bytes.count >= count, let first = pattern.first else { return nil }
                var index = 0
                while index <= bytes.count - count {
                    if bytes[index] == first && memcmpEqual(bytes, index, pattern) { return index + count }
                    index += 1
                }
                return nil
            }
        }
    }

    private static func memcmpEqual(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int, _ pattern: UnsafeBufferPointer<UInt8>) -> Bool {
        for offset in 1..<pattern.count where bytes[at + offset] != pattern[offset] { return false }
        return true
    }
}
