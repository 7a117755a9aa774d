#if canImport(Glibc)
    import Glibc
#endif

/// Owns a file descriptor and closes it exactly once: explicitly with
/// ``close()``, or when the last reference goes away.
public final class FileDescriptor {
    /// The raw descriptor, -1 once closed.
    public private(set) var rawValue: Int32

    /// Takes ownership of `rawValue`.
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    public var isOpen: Bool { rawValue >= 0 }

    /// Closes the descriptor now. EINTR is not retried: on Linux the
    /// descriptor is released even then.
    public func close() {
        guard rawValue >= 0 else { return }
        closeDescriptor(rawValue)
        rawValue = -1
    }

    deinit { close() }
}
