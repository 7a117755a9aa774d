import Testing

@testable import SignalCore

@Suite struct SessionIDTests {
    /// 32 lowercase hex digits, each digit of either nibble in use at every
    /// position, and no id twice.
    @Test func idsAreThirtyTwoRandomHexDigits() {
        let ids = (0 ..< 2000).map { _ in SessionID.random() }
        #expect(Set(ids).count == ids.count)
        let hex = Set("0123456789abcdef")
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(hex.contains) })
        for position in [0, 1, 30, 31] {
            let digits = Set(ids.map { Array($0)[position] })
            #expect(digits == hex, "position \(position)")
        }
    }
}
