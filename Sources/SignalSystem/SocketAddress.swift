#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 socket address.
public struct SocketAddress: Sendable, CustomStringConvertible {
    /// Either family's address: `sockaddr_in6` is the larger of the two.
    /// (A `sockaddr_storage`, 128 bytes, would cost every connection a
    /// hundred bytes more.)
    private var storage: sockaddr_in6
    /// The length of the address in `storage`.
    public let length: socklen_t

    /// The address of `length` bytes in `storage` (as `accept` and
    /// `getaddrinfo` give it), which must be IPv4 or IPv6: only as much as a
    /// `sockaddr_in6` holds is kept.
    public init(storage: sockaddr_storage, length: socklen_t) {
        var compact = sockaddr_in6()
        let kept = min(Int(length), MemoryLayout<sockaddr_in6>.size)
        withUnsafeMutableBytes(of: &compact) { target in
            withUnsafeBytes(of: storage) { source in
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source.prefix(kept)))
            }
        }
        self.storage = compact
        self.length = socklen_t(kept)
    }

    /// Resolves a numeric host or a name (at start-up, never on a loop thread)
    /// and a port into the first address found.
    public static func resolve(host: String, port: Int) throws(ResolveError) -> SocketAddress {
        try resolveAll(host: host, port: port)[0]
    }

    /// Every address `host` and `port` resolve to, in the resolver's order
    /// of preference (never empty), for clients that try each in turn.
    public static func resolveAll(host: String, port: Int) throws(ResolveError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        defer { if status == 0 { freeaddrinfo(result) } }
        var addresses: [SocketAddress] = []
        var entry = status == 0 ? result : nil
        while let current = entry {
            if let address = current.pointee.ai_addr {
                var storage = sockaddr_storage()
                let length = current.pointee.ai_addrlen
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
                }
                addresses.append(SocketAddress(storage: storage, length: length))
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw ResolveError(host: host, reason: status == 0 ? "no address" : String(cString: gai_strerror(status)))
        }
        return addresses
    }

    /// The address family (AF_INET or AF_INET6).
    public var family: Int32 { Int32(storage.sin6_family) }

    public var port: Int {
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }

    /// The numeric host.
    public var host: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
            } else {
                var address = raw.load(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
            }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the address is this machine's loopback: 127.0.0.0/8, ::1, or
    /// 127.0.0.0/8 mapped into IPv6 (a dual-stack listener's IPv4 peers).
    public var isLoopback: Bool {
        withUnsafeBytes(of: storage) { raw in
            guard family == AF_INET6 else {
                return UInt32(bigEndian: raw.load(as: sockaddr_in.self).sin_addr.s_addr) >> 24 == 127
            }
            let address = withUnsafeBytes(of: raw.load(as: sockaddr_in6.self).sin6_addr) { Array($0) }
            if address.dropLast().allSatisfy({ $0 == 0 }) && address[15] == 1 { return true }
            let mapped = address.prefix(10).allSatisfy { $0 == 0 } && address[10] == 0xff && address[11] == 0xff
            return mapped && address[12] == 127
        }
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String {
        family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Runs `body` with the address as a `sockaddr` pointer.
    public func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        var copy = storage
        return try withUnsafePointer(to: &copy) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, length) }
        }
    }
}

/// A host name or address that did not resolve.
public struct ResolveError: Error, Sendable, CustomStringConvertible {
    public let host: String
    /// Why it did not resolve (from `gai_strerror`).
    public let reason: String

    public var description: String { "cannot resolve \"\(host)\": \(reason)" }
}
