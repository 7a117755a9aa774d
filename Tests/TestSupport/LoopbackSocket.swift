#if canImport(Glibc)
    import Glibc
#endif

/// A socket bound to a port of 127.0.0.1 the kernel picks; the caller
/// closes `fd`. Not listening, it stands for a server that is down: a
/// connect to `port` is refused, and for as long as the socket is held no
/// other test is handed the same port (a port closed again at once could be
/// given to a parallel test's listener). Listening, it is a server's socket
/// to pass on to a child. Close-on-exec, so that only a child it is passed
/// to on purpose holds it.
public func boundLoopbackSocket(listening: Bool = false) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw ProxyError("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 && (!listening || listen(fd, 16) == 0)
        }
    }
    guard bound else {
        let message = String(cString: strerror(errno))
        close(fd)
        throw ProxyError("bind to 127.0.0.1:0: \(message)")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
