import CZlib

#if canImport(Glibc)
    import Glibc
#endif

/// A `z_stream` at a fixed address (zlib keeps a pointer back to it) whose
/// allocations are counted, so the memory a stream holds can be measured.
/// zlib allocates when a stream starts (and an inflater its window on first
/// use) and frees everything only at its end, so the count is what it holds.
final class ZlibStream {
    /// The stream, for zlib calls.
    let pointer: UnsafeMutablePointer<z_stream>
    private let allocated: UnsafeMutablePointer<Int>

    /// A zeroed stream whose allocator counts bytes.
    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: z_stream())
        allocated = .allocate(capacity: 1)
        allocated.initialize(to: 0)
        pointer.pointee.opaque = UnsafeMutableRawPointer(allocated)
        pointer.pointee.zalloc = { opaque, items, size in
            let bytes = Int(items) * Int(size)
            guard let memory = malloc(bytes) else { return nil }
            opaque?.assumingMemoryBound(to: Int.self).pointee += bytes
            return memory
        }
        pointer.pointee.zfree = { _, address in free(address) }
    }

    deinit {
        pointer.deallocate()
        allocated.deallocate()
    }

    /// Bytes zlib has allocated for this stream.
    var allocatedBytes: Int { allocated.pointee }

    /// The zlib version string the init functions check against.
    static var version: UnsafePointer<CChar>? { zlibVersion() }

    /// The size of `z_stream` the init functions check against.
    static let streamSize = Int32(MemoryLayout<z_stream>.size)

    /// The status of a zlib init call as an error, nil on success.
    static func initError(_ status: Int32, _ what: String) -> CompressionError? {
        switch status {
        case Z_OK: return nil
        case Z_MEM_ERROR: return CompressionError(.outOfMemory, "\(what): out of memory")
        default: return CompressionError(.zlib, "\(what) failed with status \(status)")
        }
    }
}
