import CShim
import SignalReactor
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Where a listener's socket comes from.
enum ListenTarget: Sendable {
    /// Bound here: every loop binds its own socket to the address with
    /// SO_REUSEPORT, so the kernel spreads connections over the loops with
    /// no hand-off between threads.
    case address(SocketAddress)
    /// Passed in by socket activation: every loop listens on a duplicate.
    case inherited(InheritedSocket)
}

/// A listening TCP socket on one event loop.
final class Listener: Selectable {
    /// The address actually bound (with the real port when 0 was asked for).
    let address: SocketAddress
    private let socket: FileDescriptor
    private let loop: EventLoop
    private let onAccept: (FileDescriptor, SocketAddress) -> Void
    private var paused = false
    /// Whether the current run of descriptor exhaustion was already logged.
    private var exhaustionLogged = false

    /// How long accepting pauses when the process is out of descriptors, so
    /// the loop does not spin on a listener it cannot serve.
    static let descriptorExhaustionPause = 0.1

    /// Listens on `target` (binding it, or on a duplicate of the inherited
    /// socket), calling `onAccept` for each new connection.
    init(
        target: ListenTarget, loop: EventLoop,
        onAccept: @escaping (FileDescriptor, SocketAddress) -> Void
    ) throws {
        let fd: FileDescriptor
        switch target {
        case .address(let address):
            fd = try Self.bound(to: address, sharingPort: true)
            _ = try syscallExpectingResult("listen") { listen(fd.rawValue, 1024) }
        case .inherited(let inherited):
            fd = try inherited.duplicate()
        }
        self.address = try Self.localAddress(of: fd.rawValue)
        self.socket = fd
        self.loop = loop
        self.onAccept = onAccept
        try loop.register(fd.rawValue, events: CSHIM_EPOLLIN, handler: self)
    }

    /// The address `fd` is bound to (getsockname).
    static func localAddress(of fd: Int32) throws(SystemError) -> SocketAddress {
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &bound) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                try syscallExpectingResult("getsockname") { getsockname(fd, address, &length) }
            }
        }
        return SocketAddress(storage: bound, length: length)
    }

    /// Fails with ``ListenError`` when another socket listens on `address`
    /// (a port of 0 is always free). The loops of one process share a port
    /// with SO_REUSEPORT, which would also let a second ringd of the same
    /// user bind it and take half the connections; a probe bound without
    /// SO_REUSEPORT sees any listener, and is closed before the loops bind.
    /// Two processes starting in the same instant could both pass it.
    static func checkFree(_ address: SocketAddress) throws(ListenError) {
        guard address.port != 0 else { return }
        try bound(to: address, sharingPort: false).close()
    }

    /// A socket bound to `address` (SO_REUSEADDR, and SO_REUSEPORT when
    /// `sharingPort`); a failed bind names the address.
    private static func bound(to address: SocketAddress, sharingPort: Bool) throws(ListenError) -> FileDescriptor {
        do throws(SystemError) {
            let fd = FileDescriptor(
                try syscallExpectingResult("socket") {
                    Glibc.socket(address.family, CSHIM_SOCK_STREAM, 0)
                })
            var one: Int32 = 1
            let size = socklen_t(MemoryLayout<Int32>.size)
            _ = try syscallExpectingResult("setsockopt(SO_REUSEADDR)") {
                setsockopt(fd.rawValue, SOL_SOCKET, SO_REUSEADDR, &one, size)
            }
            if sharingPort {
                _ = try syscallExpectingResult("setsockopt(SO_REUSEPORT)") {
                    setsockopt(fd.rawValue, SOL_SOCKET, CSHIM_SO_REUSEPORT, &one, size)
                }
            }
            let raw = fd.rawValue
            let binding = address.withSockAddr { pointer, length in
                Result { () throws(SystemError) in try syscallExpectingResult("bind") { bind(raw, pointer, length) } }
            }
            _ = try binding.get()
            return fd
        } catch  where error.code == EADDRINUSE {
            throw ListenError(message: "address \(address) already in use")
        } catch {
            throw ListenError(message: "cannot listen on \(address): \(error)")
        }
    }

    /// Stops accepting and closes the socket.
    func close() {
        loop.deregister(socket.rawValue)
        socket.close()
    }

    func handleEvents(_ events: UInt32) {
        // Accept a bounded batch per wake-up so one loop's listener cannot
        // starve its connections; level-triggered epoll reports the rest.
        for _ in 0 ..< 64 where socket.isOpen && !paused {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let result: IOResult<Int32>
            do {
                result = try withUnsafeMutablePointer(to: &peer) { pointer throws(SystemError) in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                        try syscall("accept4") { cshim_accept(socket.rawValue, address, &length) }
                    }
                }
            } catch {
                handleAcceptError(error)
                continue
            }
            guard case .processed(let fd) = result else { return }
            exhaustionLogged = false
            var one: Int32 = 1
            _ = try? syscall("setsockopt(TCP_NODELAY)") {
                setsockopt(fd, CSHIM_IPPROTO_TCP, CSHIM_TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            onAccept(FileDescriptor(fd), SocketAddress(storage: peer, length: length))
        }
    }

    private func handleAcceptError(_ error: SystemError) {
        switch error.code {
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
            if !exhaustionLogged {
                Log.repeatedWarning(
                    "descriptors", "out of descriptors, accepting in \(Self.descriptorExhaustionPause)s steps: \(error)"
                )
                exhaustionLogged = true
            }
            paused = true
            try? loop.modify(socket.rawValue, events: 0)
            loop.schedule(after: Self.descriptorExhaustionPause) { [weak self] in
                guard let self, self.socket.isOpen else { return }
                self.paused = false
                try? self.loop.modify(self.socket.rawValue, events: CSHIM_EPOLLIN)
            }
        default:
            // ECONNABORTED, EPROTO and friends concern one connection only.
            Log.debug("accept4: \(error)")
        }
    }
}

/// A listening socket that could not be set up; the message names the address.
public struct ListenError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public var description: String { message }
}
