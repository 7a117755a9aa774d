import CSystemd
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A listening TCP socket the parent passed in (systemd socket activation,
/// the `sd_listen_fds` protocol). The parent keeps its own copy, so the
/// socket outlives this process: connections that arrive while ringd
/// restarts wait in its accept queue instead of being refused.
struct InheritedSocket: Sendable, CustomStringConvertible {
    /// The descriptor as passed (3 and up).
    let descriptor: Int32
    /// Its `LISTEN_FDNAMES` entry (`FileDescriptorName=`, by default the
    /// socket unit's name); "unknown" when the parent named none.
    let name: String
    /// The address it is bound to (getsockname).
    let address: SocketAddress

    /// The name that makes an inherited socket serve TLS.
    static let tlsName = "tls"

    /// Whether it was passed for TLS (`FileDescriptorName=tls`).
    var isTLS: Bool { name == Self.tlsName }

    var description: String { "fd \(descriptor) \"\(name)\" (\(address))" }

    /// A descriptor of its own for one event loop, close-on-exec. Every loop
    /// registers a duplicate of the one socket rather than binding its own
    /// with SO_REUSEPORT: they then share the one accept queue the parent
    /// holds, so a connection queued when ringd dies is still there for the
    /// next one (a per-process SO_REUSEPORT socket would take its queue down
    /// with it, resetting those clients). A loop woken for a connection
    /// another loop took gets EAGAIN from accept4, which it treats as "none".
    func duplicate() throws(ListenError) -> FileDescriptor {
        do throws(SystemError) {
            return FileDescriptor(
                try syscallExpectingResult("fcntl(F_DUPFD_CLOEXEC)") {
                    fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
                })
        } catch {
            throw ListenError(message: "inherited socket \(self): \(error)")
        }
    }
}

/// The sockets passed by socket activation, in the order they were passed.
public struct InheritedSockets: Sendable {
    let sockets: [InheritedSocket]

    /// No inherited socket: every configured address is bound here.
    public static let none = InheritedSockets(sockets: [])

    public var isEmpty: Bool { sockets.isEmpty }

    /// Takes the sockets `LISTEN_FDS` passes to this process (`LISTEN_PID`
    /// must be its pid, else there are none) and unsets the `LISTEN_*`
    /// variables. Each must be a listening IPv4 or IPv6 stream socket; it
    /// is made non-blocking (`sd_listen_fds` already set close-on-exec).
    /// Fails with a one-line ``ListenError`` naming the descriptor.
    public static func take() throws(ListenError) -> InheritedSockets {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        defer { free(names) }
        guard count >= 0 else {
            throw ListenError(
                message: "sd_listen_fds failed: \(String(cString: strerror(-count))) (LISTEN_FDS, LISTEN_PID)")
        }
        var sockets: [InheritedSocket] = []
        for index in 0 ..< Int(count) {
            let descriptor = SD_LISTEN_FDS_START + Int32(index)
            let name = names?[index].map { String(cString: $0) } ?? "unknown"
            sockets.append(try validated(descriptor, name: name))
        }
        return InheritedSockets(sockets: sockets)
    }

    private static func validated(_ descriptor: Int32, name: String) throws(ListenError) -> InheritedSocket {
        let what = "inherited fd \(descriptor) \"\(name)\""
        guard sd_is_socket(descriptor, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1) > 0 else {
            throw ListenError(message: "\(what) is not a listening stream socket")
        }
        guard sd_is_socket_inet(descriptor, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1, 0) > 0 else {
            throw ListenError(message: "\(what) is not a TCP socket: ringd listens on IPv4 and IPv6 only")
        }
        do throws(SystemError) {
            let flags = try syscallExpectingResult("fcntl(F_GETFL)") { fcntl(descriptor, F_GETFL) }
            _ = try syscallExpectingResult("fcntl(F_SETFL)") { fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
            return InheritedSocket(
                descriptor: descriptor, name: name, address: try Listener.localAddress(of: descriptor))
        } catch {
            throw ListenError(message: "\(what): \(error)")
        }
    }

    /// Frees the NULL-terminated list `sd_listen_fds_with_names` allocated.
    private static func free(_ names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
        guard let names else { return }
        var entry = names
        while let name = entry.pointee {
            Glibc.free(name)
            entry += 1
        }
        Glibc.free(names)
    }

    /// Closes the descriptors as passed, once every loop holds a duplicate
    /// (or the server did not start): the parent's copy keeps the socket open.
    func close() {
        for socket in sockets { closeDescriptor(socket.descriptor) }
    }
}
