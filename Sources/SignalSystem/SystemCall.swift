#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call: which call, and the `errno` it left.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public let call: String
    /// The `errno` value.
    public let code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    public var description: String {
        "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}

/// The outcome of a call on a non-blocking descriptor.
public enum IOResult<Value> {
    /// The call did its work and returned `Value`.
    case processed(Value)
    /// The descriptor is not ready (EAGAIN/EWOULDBLOCK); wait for readiness.
    case wouldBlock
}

/// Runs a system call the one way every call in this module is run: retries
/// EINTR, reports EAGAIN/EWOULDBLOCK as `.wouldBlock`, and throws any other
/// failure as a ``SystemError`` naming the call.
@inline(__always)
public func syscall<T: FixedWidthInteger>(_ name: StaticString, _ body: () -> T) throws(SystemError) -> IOResult<T> {
    while true {
        let result = body()
        if result != -1 { return .processed(result) }
        let error = errno
        if error == EINTR { continue }
        if error == EAGAIN || error == EWOULDBLOCK { return .wouldBlock }
        throw SystemError(call: "\(name)", code: error)
    }
}

/// Closes a descriptor. Not retried on EINTR: Linux releases the descriptor
/// even then, and a retry could close a descriptor another thread just opened.
@inline(__always)
public func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

/// Runs a system call for which "would block" is itself a failure (set-up
/// calls on blocking paths): as ``syscall(_:_:)``, but throws on EAGAIN too.
@inline(__always)
public func syscallExpectingResult<T: FixedWidthInteger>(_ name: StaticString, _ body: () -> T) throws(SystemError) -> T
{
    switch try syscall(name, body) {
    case .processed(let value): return value
    case .wouldBlock: throw SystemError(call: "\(name)", code: EAGAIN)
    }
}
