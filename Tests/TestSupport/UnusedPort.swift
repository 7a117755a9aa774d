#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP port nobody listens on, for a server that is down:
/// one the kernel just handed out to a socket that is closed again, so a
/// connect to it is refused. (A fixed port such as 1 is refused too, unless
/// something on the machine happens to listen there.)
public func unusedLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ProxyError("socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw ProxyError("bind: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
