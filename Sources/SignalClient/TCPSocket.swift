import SignalSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Why reading from or writing to a ``TCPSocket`` stopped.
enum SocketFailure: Error, Sendable {
    /// The peer closed its side (a read returned 0).
    case endOfStream
    /// The deadline passed first.
    case timedOut
    /// A system call failed (e.g. ECONNRESET).
    case system(SystemError)
}

/// A connected, non-blocking TCP socket with blocking-style helpers that wait
/// with `poll` until a deadline.
///
/// Sends from any thread are serialized by a lock, so frames never interleave.
/// Exactly one thread reads; that thread also calls ``close()``, so the
/// descriptor it polls is never closed under it. Other threads wake it with
/// ``shutdown()``.
final class TCPSocket: Sendable {
    private let descriptor: Mutex<FileDescriptor>
    /// The raw descriptor, for the reading thread.
    private let rawValue: Int32

    private init(_ fd: Int32) {
        descriptor = Mutex(FileDescriptor(fd))
        rawValue = fd
    }

    /// Resolves `host` and connects within `timeout` seconds, with TCP_NODELAY.
    static func connect(host: String, port: Int, timeout: Double) throws(ClientError) -> TCPSocket {
        let target = ServerEndpoint(host: host, port: port).hostAndPort
        func failed(_ reason: String) -> ClientError {
            ClientError(code: ClientErrorCode.connectFailed, message: "connect to \(target): \(reason)")
        }
        let address: SocketAddress
        do {
            address = try SocketAddress.resolve(host: host, port: port)
        } catch {
            throw ClientError(code: ClientErrorCode.connectFailed, message: error.description)
        }
        let deadline = Deadline.now().adding(seconds: timeout)
        let socket: TCPSocket
        do {
            let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            socket = TCPSocket(try syscallExpectingResult("socket") { Glibc.socket(address.family, flags, 0) })
        } catch {
            throw failed(error.description)
        }
        do {
            try socket.finishConnect(to: address, deadline: deadline)
            return socket
        } catch {
            socket.close()
            switch error {
            case .timedOut: throw failed("timed out after \(timeout)s")
            case .system(let error): throw failed(error.description)
            case .endOfStream: throw failed("the connection closed")
            }
        }
    }

    /// Starts a non-blocking connect, waits for it to complete, and sets TCP_NODELAY.
    private func finishConnect(to address: SocketAddress, deadline: Deadline) throws(SocketFailure) {
        let fd = rawValue
        do {
            _ = try syscallExpectingResult("connect") { address.withSockAddr { Glibc.connect(fd, $0, $1) } }
        } catch where error.code == EINPROGRESS {
            try wait(for: Int16(POLLOUT), until: deadline)
            var pending: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            do {
                _ = try syscallExpectingResult("getsockopt") { getsockopt(fd, SOL_SOCKET, SO_ERROR, &pending, &length) }
            } catch {
                throw .system(error)
            }
            if pending != 0 { throw .system(SystemError(call: "connect", code: pending)) }
        } catch {
            throw .system(error)
        }
        var one: Int32 = 1
        do {
            _ = try syscallExpectingResult("setsockopt") {
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
        } catch {
            throw .system(error)
        }
    }

    /// Sends all of `bytes`, waiting for buffer space until `deadline`.
    /// Serialized with every other send; fails once the socket is closed.
    func sendAll(_ bytes: [UInt8], deadline: Deadline) throws(SocketFailure) {
        try descriptor.withLock { (fd: inout FileDescriptor) throws(SocketFailure) in
            guard fd.isOpen else { throw SocketFailure.system(SystemError(call: "send", code: EBADF)) }
            let raw = fd.rawValue
            var sent = 0
            while sent < bytes.count {
                let result: IOResult<Int>
                do throws(SystemError) {
                    result = try syscall("send") {
                        bytes.withUnsafeBytes { all in
                            let rest = UnsafeRawBufferPointer(rebasing: all[sent...])
                            return Glibc.send(raw, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
                        }
                    }
                } catch {
                    throw SocketFailure.system(error)
                }
                switch result {
                case .processed(let count): sent += count
                case .wouldBlock: try wait(for: Int16(POLLOUT), until: deadline)
                }
            }
        }
    }

    /// Reads what is available into `buffer` (appending), waiting until
    /// `deadline` (nil: forever). Throws ``SocketFailure/endOfStream`` when the
    /// peer closed its side.
    func receive(into buffer: inout [UInt8], until deadline: Deadline?) throws(SocketFailure) {
        let fd = rawValue
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let result: IOResult<Int>
            do {
                result = try syscall("recv") { chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) } }
            } catch {
                throw SocketFailure.system(error)
            }
            switch result {
            case .processed(0):
                throw SocketFailure.endOfStream
            case .processed(let count):
                buffer.append(contentsOf: chunk[0 ..< count])
                return
            case .wouldBlock:
                try wait(for: Int16(POLLIN), until: deadline)
            }
        }
    }

    /// Waits until the socket is ready for `events` or has an error.
    private func wait(for events: Int16, until deadline: Deadline?) throws(SocketFailure) {
        let fd = rawValue
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let left = deadline.seconds(since: .now())
                guard left > 0 else { throw SocketFailure.timedOut }
                timeout = Int32(min((left * 1000).rounded(.up), Double(Int32.max)))
            }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready: IOResult<Int32>
            do {
                ready = try syscall("poll") { poll(&entry, 1, timeout) }
            } catch {
                throw SocketFailure.system(error)
            }
            if case .processed(let count) = ready, count > 0 { return }
        }
    }

    /// Shuts both directions down, waking the reading thread; the descriptor stays open.
    func shutdown() {
        descriptor.withLock { fd in
            guard fd.isOpen else { return }
            let raw = fd.rawValue
            _ = try? syscall("shutdown") { Glibc.shutdown(raw, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the descriptor (by the reading thread, when it is done).
    func close() {
        descriptor.withLock { $0.close() }
    }
}
