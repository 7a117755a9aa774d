/// `initiateCall`'s `clientCallId` as the client libraries make it (one rule
/// for SignalClient and RingKit, so the server's retry window sees the same
/// kind of id from both).
public enum ClientCallId {
    /// A fresh id: 128 random bits as 32 lowercase hex digits.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return hex(generator.next()) + hex(generator.next())
    }

    /// `value` as 16 hex digits, zero-padded.
    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
