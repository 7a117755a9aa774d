import SignalCrypto
import SignalSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Why reading from or writing to a ``TCPSocket`` stopped.
enum SocketFailure: Error, Sendable {
    /// The peer closed its side (a read returned 0, or TLS close_notify came).
    case endOfStream
    /// The deadline passed first.
    case timedOut
    /// A system call failed (e.g. ECONNRESET).
    case system(SystemError)
    /// The TLS session failed (a bad record, an alert from the server).
    case tls(TLSError)
}

/// A connected, non-blocking TCP socket, optionally speaking TLS, with
/// blocking-style helpers that wait with `poll` until a deadline.
///
/// Sends from any thread are serialized by a lock, so frames never interleave;
/// with TLS the same lock covers encrypting and sending, so records leave in
/// the order they were made. Exactly one thread reads; that thread also calls
/// ``close()``, so the descriptor it polls is never closed under it. Other
/// threads wake it with ``shutdown()``.
final class TCPSocket: Sendable {
    private let descriptor: Mutex<FileDescriptor>
    /// The raw descriptor, for the reading thread.
    private let rawValue: Int32
    /// The TLS session, once ``startTLS(_:serverName:deadline:)`` began it.
    private let tls = Mutex<TLSSession?>(nil)

    private init(_ fd: Int32) {
        descriptor = Mutex(FileDescriptor(fd))
        rawValue = fd
    }

    /// Resolves the endpoint's host and connects to its addresses in turn,
    /// within `timeout` seconds in all, with TCP_NODELAY; then, for a
    /// `wss://` endpoint, runs the TLS handshake within `timeout`, checking
    /// the server's certificate as `verification` says.
    static func connect(to endpoint: ServerEndpoint, verification: TLSVerification,
                        timeout: Double) throws(ClientError) -> TCPSocket {
        let socket = try connect(host: endpoint.host, port: endpoint.port, timeout: timeout)
        guard endpoint.isSecure else { return socket }
        do throws(SocketFailure) {
            let context: TLSContext
            do {
                context = try TLSContext.client(verification: verification)
            } catch {
                throw SocketFailure.tls(error)
            }
            try socket.startTLS(context, serverName: endpoint.host, deadline: Deadline.now().adding(seconds: timeout))
            return socket
        } catch {
            socket.close()
            switch error {
            case .endOfStream:
                throw ClientError(code: .tlsFailed,
                                  message: "\(endpoint.hostAndPort) closed the connection during the TLS handshake")
            case .timedOut:
                throw ClientError(code: .tlsFailed, message: "no TLS handshake with \(endpoint.hostAndPort) within \(timeout)s")
            case .system(let error):
                throw ClientError(code: .tlsFailed, message: "TLS with \(endpoint.hostAndPort): \(error)")
            case .tls(let error):
                throw ClientError(code: .tlsFailed, message: "TLS with \(endpoint.hostAndPort): \(error.message)")
            }
        }
    }

    private static func connect(host: String, port: Int, timeout: Double) throws(ClientError) -> TCPSocket {
        let target = ServerEndpoint(host: host, port: port).hostAndPort
        let addresses: [SocketAddress]
        do {
            addresses = try SocketAddress.resolveAll(host: host, port: port)
        } catch {
            throw ClientError(code: .connectFailed, message: error.description)
        }
        let deadline = Deadline.now().adding(seconds: timeout)
        var reason = ""
        for address in addresses {
            let socket: TCPSocket
            do {
                let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
                socket = TCPSocket(try syscallExpectingResult("socket") { Glibc.socket(address.family, flags, 0) })
            } catch {
                reason = error.description
                continue
            }
            do {
                try socket.finishConnect(to: address, deadline: deadline)
                return socket
            } catch {
                socket.close()
                switch error {
                case .timedOut: reason = "timed out after \(timeout)s"
                case .system(let error): reason = error.description
                case .endOfStream, .tls: reason = "the connection closed"
                }
                if case .timedOut = error { break }
            }
        }
        throw ClientError(code: .connectFailed, message: "connect to \(target): \(reason)")
    }

    /// Starts a non-blocking connect, waits for it to complete, and sets TCP_NODELAY.
    private func finishConnect(to address: SocketAddress, deadline: Deadline) throws(SocketFailure) {
        let fd = rawValue
        do {
            _ = try syscallExpectingResult("connect") { address.withSockAddr { Glibc.connect(fd, $0, $1) } }
        } catch where error.code == EINPROGRESS {
            try Self.wait(on: fd, for: Int16(POLLOUT), until: deadline)
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

    // MARK: TLS

    /// Runs the client side of the TLS handshake, checking the certificate
    /// against `serverName` unless the context verifies nothing.
    private func startTLS(_ context: TLSContext, serverName: String, deadline: Deadline) throws(SocketFailure) {
        try tls.withLock { (slot: inout TLSSession?) throws(SocketFailure) in
            do throws(TLSError) {
                slot = try TLSSession(context: context, serverName: serverName)
            } catch {
                throw .tls(error)
            }
        }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var first = true
        while try !advanceHandshake(deadline: deadline) {
            let count = try receiveRaw(into: &chunk, until: deadline)
            // TLS records start with a type from 20 to 23; anything else is
            // most likely an HTTP answer from a plain-text port.
            if first, !(20 ... 23).contains(chunk[0]) {
                throw .tls(TLSError(code: TLSError.handshakeCode,
                                    message: "the server does not speak TLS on this port (try ws://)"))
            }
            first = false
            feed(chunk, count: count)
        }
    }

    /// Hands the first `count` bytes of `chunk`, ciphertext read from the
    /// socket, to the TLS session.
    private func feed(_ chunk: [UInt8], count: Int) {
        tls.withLock { slot in
            chunk.withUnsafeBytes { slot?.receive(UnsafeRawBufferPointer(rebasing: $0[0 ..< count])) }
        }
    }

    /// One handshake step, sending what it produced; true once complete.
    private func advanceHandshake(deadline: Deadline) throws(SocketFailure) -> Bool {
        let step = tls.withLock { slot -> (Result<Bool, TLSError>, [UInt8]?) in
            guard let session = slot else { return (.success(true), nil) }
            let done = Result { () throws(TLSError) in try session.handshake() }
            // On failure the output is the alert telling the server why.
            return (done, session.takeOutput())
        }
        if let output = step.1 {
            do {
                try send(output, deadline: deadline)
            } catch {
                if case .success = step.0 { throw error }
            }
        }
        switch step.0 {
        case .success(let done): return done
        case .failure(let error): throw .tls(error)
        }
    }

    // MARK: Sending and receiving

    /// Sends all of `bytes` (encrypted when TLS is on), waiting for buffer
    /// space until `deadline`. Serialized with every other send: records are
    /// made and sent under the send lock, so they leave in order, while the
    /// TLS session is locked only to encrypt, never while a send waits, so
    /// the reading thread keeps decrypting. Fails once the socket is closed.
    func sendAll(_ bytes: [UInt8], deadline: Deadline) throws(SocketFailure) {
        try descriptor.withLock { (fd: inout FileDescriptor) throws(SocketFailure) in
            let encrypted = tls.withLock { slot -> Result<[UInt8], TLSError>? in
                guard let session = slot else { return nil }
                let written = bytes.withUnsafeBytes { plaintext in
                    Result { () throws(TLSError) in try session.write(plaintext) }
                }
                // The output also holds what reading left behind (a key update's answer).
                return written.map { session.takeOutput() ?? [] }
            }
            switch encrypted {
            case nil: try Self.send(bytes, on: fd, deadline: deadline)
            case .success(let ciphertext)?: try Self.send(ciphertext, on: fd, deadline: deadline)
            case .failure(let error)?: throw SocketFailure.tls(error)
            }
        }
    }

    /// Sends raw `bytes` under the send lock.
    private func send(_ bytes: [UInt8], deadline: Deadline) throws(SocketFailure) {
        try descriptor.withLock { (fd: inout FileDescriptor) throws(SocketFailure) in
            try Self.send(bytes, on: fd, deadline: deadline)
        }
    }

    /// Sends all of `bytes` on `fd`, whose send lock the caller holds.
    private static func send(_ bytes: [UInt8], on fd: FileDescriptor, deadline: Deadline) throws(SocketFailure) {
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
            case .wouldBlock: try wait(on: raw, for: Int16(POLLOUT), until: deadline)
            }
        }
    }

    /// What the TLS session had for a reader.
    private enum Decrypted {
        /// The socket is plain: read it directly.
        case plain
        /// Plaintext was appended to the reader's buffer.
        case delivered
        /// Nothing yet: more ciphertext is needed.
        case needsInput
        /// The server sent close_notify.
        case closed
    }

    /// Reads what is available into `buffer` (appending), waiting until
    /// `deadline` (nil: forever). Throws ``SocketFailure/endOfStream`` when the
    /// peer closed its side.
    func receive(into buffer: inout [UInt8], until deadline: Deadline?) throws(SocketFailure) {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            switch try decrypt(into: &buffer, scratch: &chunk) {
            case .delivered: return
            case .closed: throw .endOfStream
            case .plain:
                let count = try receiveRaw(into: &chunk, until: deadline)
                buffer.append(contentsOf: chunk[0 ..< count])
                return
            case .needsInput:
                let count = try receiveRaw(into: &chunk, until: deadline)
                feed(chunk, count: count)
            }
        }
    }

    /// Decrypts what the session holds. Records reading produces (a key
    /// update's answer) stay in the session for the next send, which TLS 1.3
    /// allows and which keeps them in order; the reader never sends.
    private func decrypt(into buffer: inout [UInt8], scratch: inout [UInt8]) throws(SocketFailure) -> Decrypted {
        try tls.withLock { (slot: inout TLSSession?) throws(SocketFailure) -> Decrypted in
            guard let session = slot else { return .plain }
            var delivered = false
            while true {
                let read = scratch.withUnsafeMutableBytes { bytes in
                    Result { () throws(TLSError) in try session.read(into: bytes) }
                }
                switch read {
                case .success(.plaintext(let count)):
                    buffer.append(contentsOf: scratch[0 ..< count])
                    delivered = true
                case .success(.needsInput): return delivered ? .delivered : .needsInput
                case .success(.closed): return delivered ? .delivered : .closed
                case .failure(let error): throw .tls(error)
                }
            }
        }
    }

    /// Reads raw bytes from the socket into the start of `chunk`.
    private func receiveRaw(into chunk: inout [UInt8], until deadline: Deadline?) throws(SocketFailure) -> Int {
        let fd = rawValue
        while true {
            let result: IOResult<Int>
            do {
                result = try syscall("recv") { chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) } }
            } catch {
                throw SocketFailure.system(error)
            }
            switch result {
            case .processed(0): throw SocketFailure.endOfStream
            case .processed(let count): return count
            case .wouldBlock: try Self.wait(on: fd, for: Int16(POLLIN), until: deadline)
            }
        }
    }

    /// Waits until `fd` is ready for `events` or has an error.
    private static func wait(on fd: Int32, for events: Int16, until deadline: Deadline?) throws(SocketFailure) {
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

    /// Sends TLS close_notify (best effort, briefly), then shuts both
    /// directions down, waking the reading thread; the descriptor stays open.
    func shutdown() {
        descriptor.withLock { fd in
            guard fd.isOpen else { return }
            let closeNotify = tls.withLock { (slot: inout TLSSession?) -> [UInt8]? in
                slot?.close()
                return slot?.takeOutput()
            }
            if let closeNotify { try? Self.send(closeNotify, on: fd, deadline: Deadline.now().adding(seconds: 1)) }
            let raw = fd.rawValue
            _ = try? syscall("shutdown") { Glibc.shutdown(raw, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the descriptor (by the reading thread, when it is done).
    func close() {
        descriptor.withLock { $0.close() }
    }
}
