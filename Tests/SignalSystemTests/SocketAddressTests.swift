import SignalSystem
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.blocking) struct SocketAddressTests {
    @Test func resolvesNumericIPv4() throws {
        let address = try SocketAddress.resolve(host: "127.0.0.1", port: 8787)
        #expect(address.family == AF_INET)
        #expect(address.host == "127.0.0.1" && address.port == 8787)
        #expect(address.description == "127.0.0.1:8787")
    }

    @Test func bracketsIPv6InItsDescription() throws {
        let address = try SocketAddress.resolve(host: "::1", port: 443)
        #expect(address.family == AF_INET6)
        #expect(address.description == "[::1]:443")
    }

    /// A connection keeps its peer's address: an IPv6 one, the larger,
    /// fits in 32 bytes and comes back whole, scope id included.
    @Test func anAddressIsKeptCompactAndWhole() throws {
        #expect(MemoryLayout<SocketAddress>.size <= 32)
        let address = try SocketAddress.resolve(host: "fe80::1%1", port: 8443)
        #expect(address.family == AF_INET6 && address.length == socklen_t(MemoryLayout<sockaddr_in6>.size))
        #expect(address.port == 8443 && address.host == "fe80::1")
        let scope = address.withSockAddr { pointer, _ in
            pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_scope_id }
        }
        #expect(scope == 1)
    }

    @Test func aHostThatDoesNotResolveNamesItself() {
        do {
            _ = try SocketAddress.resolve(host: "no such host.invalid", port: 1)
            Issue.record("resolved a host that cannot exist")
        } catch {
            #expect(error.host == "no such host.invalid")
            #expect(error.description.hasPrefix("cannot resolve \"no such host.invalid\": "))
        }
    }

    @Test func bindsAndReportsThePortTheKernelChose() throws {
        let address = try SocketAddress.resolve(host: "127.0.0.1", port: 0)
        let fd = try syscallExpectingResult("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
        defer { closeDescriptor(fd) }
        _ = try syscallExpectingResult("bind") { address.withSockAddr { bind(fd, $0, $1) } }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                try syscallExpectingResult("getsockname") { getsockname(fd, raw, &length) }
            }
        }
        let bound = SocketAddress(storage: storage, length: length)
        #expect(bound.host == "127.0.0.1" && bound.port > 0)
    }

    /// Loopback is 127.0.0.0/8, ::1, and 127.0.0.0/8 as a dual-stack
    /// listener sees an IPv4 peer; a wildcard or another address is not.
    @Test func loopbackAddresses() throws {
        for host in ["127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"] {
            #expect(try SocketAddress.resolve(host: host, port: 1).isLoopback, "\(host)")
        }
        for host in ["0.0.0.0", "::", "192.0.2.7", "10.1.2.3", "::ffff:192.0.2.7", "2001:db8::1", "::2", "128.0.0.1"] {
            #expect(try !SocketAddress.resolve(host: host, port: 1).isLoopback, "\(host)")
        }
    }
}
