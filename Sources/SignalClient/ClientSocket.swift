import CShim
import SignalCrypto
import SignalReactor
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// What a ``ClientSocket`` tells its owner, on the loop.
protocol ClientSocketDelegate: AnyObject {
    /// The TCP connection (and, for `wss://`, the TLS handshake) is complete.
    func socketDidConnect(_ socket: ClientSocket)
    /// Plaintext arrived; the bytes are valid only during the call.
    func socket(_ socket: ClientSocket, didRead bytes: UnsafeRawBufferPointer)
    /// The socket is closed for good; nothing follows.
    func socket(_ socket: ClientSocket, didEnd ending: SocketEnding)
}

/// Why a ``ClientSocket`` ended.
enum SocketEnding: Error {
    /// It never connected: no address took the connection, or TLS failed.
    case connectFailed(ClientError)
    /// The peer closed its side (a read returned 0, or TLS close_notify came).
    case endOfStream
    /// A system call failed (e.g. ECONNRESET).
    case system(SystemError)
    /// The TLS session failed after the handshake (a bad record, an alert).
    case tls(TLSError)
    /// The owner closed it (``ClientSocket/close()``).
    case closed
}

/// One client TCP connection on the client I/O loop, optionally speaking
/// TLS through memory buffers: a non-blocking connect to each resolved
/// address in turn (the whole within `timeout`), TCP_NODELAY, the TLS
/// handshake (within `timeout` again), then plaintext in and out.
/// Lives on the loop; registered with it, which keeps it alive.
final class ClientSocket: Selectable {
    private enum Phase {
        /// Trying `addresses[index]`.
        case connecting(index: Int)
        /// Connected; the TLS handshake runs. `first`: no byte arrived yet.
        case handshaking(first: Bool)
        case open
        case closed
    }

    let loop: EventLoop
    private let endpoint: ServerEndpoint
    private let addresses: [SocketAddress]
    private let timeout: Double
    private let context: TLSContext?
    private var delegate: ClientSocketDelegate?
    private var phase: Phase = .connecting(index: 0)
    private var fd = FileDescriptor(-1)
    private var registered: UInt32?
    private var tls: TLSSession?
    private var outbound = OutboundBuffer()
    private var deadline: TimerID?
    /// Why the last address failed, for the error when all have.
    private var lastReason = ""

    /// Starts connecting to `addresses` (those of `endpoint`); the delegate
    /// hears of the outcome.
    init(
        to addresses: [SocketAddress], of endpoint: ServerEndpoint, verification: TLSVerification, timeout: Double,
        on loop: EventLoop, delegate: ClientSocketDelegate
    ) {
        self.loop = loop
        self.endpoint = endpoint
        self.addresses = addresses
        self.timeout = timeout
        self.delegate = delegate
        do {
            context = endpoint.isSecure ? try TLSContext.client(verification: verification) : nil
        } catch {
            context = nil
            loop.atTickEnd { [self] in
                end(.connectFailed(tlsError("TLS with \(endpoint.hostAndPort): \(error.message)")))
            }
            return
        }
        deadline = loop.schedule(after: timeout) { [weak self] in self?.connectTimedOut() }
        loop.atTickEnd { [self] in connect(index: 0) }
    }

    // MARK: Connecting

    private func connect(index: Int) {
        guard index < addresses.count else {
            return end(
                .connectFailed(
                    ClientError(
                        code: .connectFailed,
                        message: "connect to \(endpoint.hostAndPort): \(lastReason)")))
        }
        phase = .connecting(index: index)
        let address = addresses[index]
        do throws(SystemError) {
            fd = FileDescriptor(try syscallExpectingResult("socket") { socket(address.family, CSHIM_SOCK_STREAM, 0) })
            let raw = fd.rawValue
            do throws(SystemError) {
                _ = try syscallExpectingResult("connect") { address.withSockAddr { Glibc.connect(raw, $0, $1) } }
            } catch  where error.code == EINPROGRESS {}
            try watch(CSHIM_EPOLLOUT)
        } catch {
            failAddress(error.description)
        }
    }

    /// The socket became writable while connecting: connected, or refused.
    private func finishConnect() {
        var pending: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        let raw = fd.rawValue
        do throws(SystemError) {
            _ = try syscallExpectingResult("getsockopt") { getsockopt(raw, SOL_SOCKET, SO_ERROR, &pending, &length) }
            if pending != 0 { throw SystemError(call: "connect", code: pending) }
            var one: Int32 = 1
            _ = try syscallExpectingResult("setsockopt") {
                setsockopt(raw, CSHIM_IPPROTO_TCP, CSHIM_TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
        } catch {
            return failAddress(error.description)
        }
        if let deadline { loop.cancel(deadline) }
        guard let context else { return opened() }
        do {
            tls = try TLSSession(context: context, serverName: endpoint.host)
        } catch {
            return end(.connectFailed(tlsError("TLS with \(endpoint.hostAndPort): \(error.message)")))
        }
        phase = .handshaking(first: true)
        deadline = loop.schedule(after: timeout) { [weak self] in self?.connectTimedOut() }
        advanceHandshake()
    }

    /// This address failed for `reason`: try the next one.
    private func failAddress(_ reason: String) {
        guard case .connecting(let index) = phase else { return }
        lastReason = reason
        unwatch()
        fd.close()
        connect(index: index + 1)
    }

    private func connectTimedOut() {
        deadline = nil
        switch phase {
        case .connecting:
            lastReason = "timed out after \(timeout)s"
            end(
                .connectFailed(
                    ClientError(
                        code: .connectFailed,
                        message: "connect to \(endpoint.hostAndPort): \(lastReason)")))
        case .handshaking:
            end(.connectFailed(tlsError("no TLS handshake with \(endpoint.hostAndPort) within \(timeout)s")))
        case .open, .closed:
            return
        }
    }

    /// One handshake step, sending what it produced (on failure, the alert
    /// telling the server why).
    private func advanceHandshake() {
        guard let tls else { return }
        let done: Bool
        do {
            done = try tls.handshake()
        } catch {
            queueOutput(of: tls)
            flush()
            return end(.connectFailed(tlsError("TLS with \(endpoint.hostAndPort): \(error.message)")))
        }
        queueOutput(of: tls)
        flush()
        if done, case .handshaking = phase {
            if let deadline { loop.cancel(deadline) }
            deadline = nil
            opened()
        }
    }

    private func opened() {
        phase = .open
        updateInterest()
        delegate?.socketDidConnect(self)
    }

    private func tlsError(_ message: String) -> ClientError { ClientError(code: .tlsFailed, message: message) }

    // MARK: Writing

    /// Queues `bytes` (encrypted with TLS) and writes what the socket takes now.
    func write(_ bytes: [UInt8]) {
        guard case .open = phase else { return }
        if let tls {
            let written = bytes.withUnsafeBytes { plaintext in
                Result { () throws(TLSError) in try tls.write(plaintext) }
            }
            if case .failure(let error) = written { return end(.tls(error)) }
            queueOutput(of: tls)
        } else {
            outbound.append(bytes)
        }
        flush()
    }

    private func queueOutput(of tls: TLSSession) {
        if let ciphertext = tls.takeOutput() { outbound.append(ciphertext) }
    }

    private func flush() {
        guard fd.isOpen else { return }
        do {
            _ = try outbound.flush(to: fd.rawValue)
        } catch let error as SystemError {
            return end(.system(error))
        } catch {
            return end(.system(SystemError(call: "sendmsg", code: EIO)))
        }
        updateInterest()
    }

    // MARK: Reading

    func handleEvents(_ events: UInt32) {
        switch phase {
        case .connecting:
            finishConnect()
        case .handshaking, .open:
            if events & CSHIM_EPOLLOUT != 0 { flush() }
            if events & (CSHIM_EPOLLIN | CSHIM_EPOLLHUP | CSHIM_EPOLLERR) != 0 { read() }
        case .closed:
            return
        }
    }

    private func read() {
        let buffer = loop.readBuffer
        let result: IOResult<Int>
        do {
            result = try syscall("read") { Glibc.read(fd.rawValue, buffer.baseAddress, buffer.count) }
        } catch {
            return handshakeFailedOr(.system(error))
        }
        switch result {
        case .wouldBlock:
            return
        case .processed(0):
            handshakeFailedOr(.endOfStream)
        case .processed(let count):
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0 ..< count])
            if let tls { decrypt(bytes, with: tls) } else { delegate?.socket(self, didRead: bytes) }
        }
    }

    /// During the handshake a failure is a TLS failure; later it is `ending`.
    private func handshakeFailedOr(_ ending: SocketEnding) {
        guard case .handshaking = phase else { return end(ending) }
        let message =
            switch ending {
            case .endOfStream: "\(endpoint.hostAndPort) closed the connection during the TLS handshake"
            default: "TLS with \(endpoint.hostAndPort): \(ending)"
            }
        end(.connectFailed(tlsError(message)))
    }

    private func decrypt(_ ciphertext: UnsafeRawBufferPointer, with tls: TLSSession) {
        if case .handshaking(first: true) = phase {
            // TLS records start with a type from 20 to 23; anything else is
            // most likely an HTTP answer from a plain-text port.
            guard let type = ciphertext.first, (20 ... 23).contains(type) else {
                return end(.connectFailed(tlsError("the server does not speak TLS on this port (try ws://)")))
            }
            phase = .handshaking(first: false)
        }
        tls.receive(ciphertext)
        if case .handshaking = phase { advanceHandshake() }
        let buffer = loop.readBuffer
        while case .open = phase {
            do {
                switch try tls.read(into: buffer) {
                case .plaintext(let count):
                    delegate?.socket(self, didRead: UnsafeRawBufferPointer(rebasing: buffer[0 ..< count]))
                case .needsInput:
                    // Reading may have produced records (a key update's answer).
                    queueOutput(of: tls)
                    flush()
                    return
                case .closed:
                    return end(.endOfStream)
                }
            } catch {
                return end(.tls(error))
            }
        }
    }

    // MARK: Closing

    /// Closes now: TLS close_notify (best effort), then the descriptor; the
    /// delegate hears ``SocketEnding/closed``.
    func close() {
        guard case .open = phase, let tls else { return end(.closed) }
        tls.close()
        queueOutput(of: tls)
        _ = try? outbound.flush(to: fd.rawValue)
        end(.closed)
    }

    private func end(_ ending: SocketEnding) {
        if case .closed = phase { return }
        phase = .closed
        if let deadline { loop.cancel(deadline) }
        deadline = nil
        unwatch()
        outbound.discard()
        fd.close()
        let delegate = self.delegate
        self.delegate = nil
        delegate?.socket(self, didEnd: ending)
    }

    // MARK: Interest

    private func watch(_ events: UInt32) throws(SystemError) {
        if registered == nil {
            try loop.register(fd.rawValue, events: events, handler: self)
        } else if registered != events {
            try loop.modify(fd.rawValue, events: events)
        }
        registered = events
    }

    private func unwatch() {
        guard registered != nil else { return }
        registered = nil
        loop.deregister(fd.rawValue)
    }

    /// Readable always; writable only while bytes are queued.
    private func updateInterest() {
        if case .closed = phase { return }
        do {
            try watch(CSHIM_EPOLLIN | (outbound.isEmpty ? 0 : CSHIM_EPOLLOUT))
        } catch {
            end(.system(error))
        }
    }
}
