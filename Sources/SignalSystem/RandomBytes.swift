import CShim

#if canImport(Glibc)
    import Glibc
#endif

/// Fills `buffer` from the kernel's CSPRNG in one `getrandom` (Swift's
/// `SystemRandomNumberGenerator` makes one per 8 bytes). Blocks only before
/// the kernel's pool is first initialised, as `getrandom` does.
public func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
    var filled = 0
    while filled < buffer.count {
        let result = cshim_getrandom(buffer.baseAddress! + filled, buffer.count - filled)
        if result > 0 {
            filled += result
        } else if errno != EINTR {
            // getrandom fails only on bad arguments or a kernel without it
            // (before 3.17); fall back to the standard library's generator.
            var generator = SystemRandomNumberGenerator()
            for index in filled ..< buffer.count { buffer[index] = generator.next() }
            return
        }
    }
}
