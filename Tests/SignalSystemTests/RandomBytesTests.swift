import SignalSystem
import Testing

@Suite struct RandomBytesTests {
    /// Every byte of a buffer is filled: over 64 fills of 64 bytes, each
    /// position takes many values (an unfilled one would stay 0).
    @Test func fillsEveryByte() {
        var seen = [Set<UInt8>](repeating: [], count: 64)
        for _ in 0 ..< 64 {
            let bytes = [UInt8](unsafeUninitializedCapacity: 64) { buffer, count in
                buffer.initialize(repeating: 0)
                fillRandom(UnsafeMutableRawBufferPointer(buffer))
                count = 64
            }
            for (index, byte) in bytes.enumerated() { seen[index].insert(byte) }
        }
        #expect(seen.allSatisfy { $0.count > 8 })
    }

    /// A request larger than one `getrandom` returns (256 bytes at most
    /// without blocking semantics on old kernels) is filled to its end.
    @Test func fillsALargeBuffer() {
        let bytes = [UInt8](unsafeUninitializedCapacity: 4096) { buffer, count in
            buffer.initialize(repeating: 0)
            fillRandom(UnsafeMutableRawBufferPointer(buffer))
            count = 4096
        }
        #expect(bytes.suffix(256).contains { $0 != 0 })
        #expect(Set(bytes).count > 200)
    }
}
