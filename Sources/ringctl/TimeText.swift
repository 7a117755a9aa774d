#if canImport(Glibc)
    import Glibc
#endif

/// Times and lengths of time in words.
enum TimeText {
    /// `12.4 s` under a minute, then `3 min 5 s`, then `1 h 2 min`.
    static func duration(milliseconds: Int64) -> String {
        let tenths = (milliseconds + 50) / 100
        guard tenths >= 600 else { return "\(tenths / 10).\(tenths % 10) s" }
        let seconds = tenths / 10
        guard seconds >= 3600 else { return "\(seconds / 60) min \(seconds % 60) s" }
        return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    }

    /// A ring timeout as exact as it was asked: `30 s`, `0.2 s`, `1.25 s`.
    static func timeout(milliseconds: Int64) -> String {
        let fraction = milliseconds % 1000
        guard fraction != 0 else { return "\(milliseconds / 1000) s" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: max(0, 3 - digits.count)) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(milliseconds / 1000).\(digits) s"
    }

    /// `YYYY-MM-DD HH:MM:SS` in local time, for milliseconds since the Unix epoch.
    static func local(milliseconds: Int64) -> String {
        tzset()
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
