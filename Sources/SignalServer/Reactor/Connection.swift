import CShim
import SignalCrypto
import SignalReactor
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The protocol currently spoken on a connection (HTTP, then maybe WebSocket).
protocol ConnectionHandler: AnyObject {
    /// Bytes arrived; they are valid only during the call.
    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer)
    /// The connection is closed: by the peer (EOF, reset), by an error, or
    /// locally. Called once; the handler is released afterwards.
    func connectionDidClose(_ connection: Connection)
}

/// Limits on what one connection may queue for sending. Each queued chunk
/// counts ``chunkCost`` bytes besides its own, so the limits bound the number
/// of chunks too: a million 2-byte frames hold far more memory than 2 MB.
struct BackpressureLimits {
    /// Above this many queued bytes the connection stops reading from the peer.
    var softLimit: Int
    /// Above this many queued bytes the peer is too slow and the connection is dropped.
    var hardLimit: Int

    /// What a queued chunk costs besides its bytes: about its array's heap
    /// header and its slot in the queue.
    static let chunkCost = 64
}

/// How a TLS connection answers a peer that speaks plain text to it.
struct PlaintextRefusal {
    /// Sent unencrypted before closing (an HTTP error naming `wss://`).
    let response: [UInt8]
}

/// One accepted TCP connection on one event loop: non-blocking reads into the
/// loop's shared buffer, queued `writev` writes, backpressure, and an orderly
/// close that flushes, half-closes and lingers briefly for the peer's FIN.
///
/// With a ``TLSSession`` the handler sees only plaintext: ciphertext read is
/// decrypted in the same buffer, writes are encrypted into the queue, and a
/// close sends close_notify first.
final class Connection: Selectable {
    /// How the connection is closing.
    enum State {
        /// Reading and writing.
        case open
        /// No more writes; closes once the queued bytes are out.
        case flushing
        /// Write side shut down; reading and discarding until the peer's EOF.
        case lingering
        /// The descriptor is closed.
        case closed
    }

    /// The loop the connection lives on.
    let loop: EventLoop
    /// The peer's address, for logs.
    let peer: SocketAddress
    /// The protocol handler; replaced on upgrade, released on close.
    var handler: ConnectionHandler?
    /// Called once after the descriptor is closed.
    var onClose: ((Connection) -> Void)?
    /// Called once when the connection authenticates (see ``markAuthenticated()``).
    var onAuthenticate: (() -> Void)?
    /// Whether a signaling session authenticated on this connection; until
    /// then it counts against `limits.maxUnauthenticatedConnections`.
    private(set) var isAuthenticated = false

    private let socket: FileDescriptor
    private let limits: BackpressureLimits
    /// The TLS session, for connections on a TLS listener.
    private let tls: TLSSession?
    /// What to tell a plaintext peer on a TLS listener; nil once the first
    /// bytes showed a TLS handshake.
    private var plaintextRefusal: PlaintextRefusal?
    private var outbound = OutboundBuffer()
    /// A frame that only matters in its latest version (a pong past the soft
    /// limit), held while other bytes wait for the socket; see ``writeLatest(_:)``.
    private(set) var heldFrame: [UInt8]?
    private(set) var state: State = .open
    /// Not reading because too much is queued for the peer.
    private var readingPaused = false
    /// Not reading because the handler asked (see ``holdReading(_:)``).
    private var readingHeld = false
    private var registeredEvents: UInt32 = 0
    private var closeTimer: TimerID?
    /// Told once how the TLS handshake ended (true: complete), then dropped.
    var onHandshake: ((Bool) -> Void)?

    /// How long a closing connection may take to flush and see the peer's FIN.
    static let closeTimeout = 5.0

    init(
        socket: FileDescriptor, peer: SocketAddress, loop: EventLoop, limits: BackpressureLimits,
        tls: TLSSession? = nil, plaintextRefusal: PlaintextRefusal? = nil
    ) {
        self.socket = socket
        self.peer = peer
        self.loop = loop
        self.limits = limits
        self.tls = tls
        self.plaintextRefusal = tls == nil ? nil : plaintextRefusal
    }

    /// Starts watching the socket.
    func start() throws(SystemError) {
        registeredEvents = CSHIM_EPOLLIN
        try loop.register(socket.rawValue, events: registeredEvents, handler: self)
    }

    // MARK: Writing

    /// Queues chunks for sending, in order, and writes what the socket takes now.
    func write(_ chunks: [UInt8]...) {
        guard state == .open else { return }
        let socketFull = !outbound.isEmpty
        // A held frame goes before what follows it, so it is never stuck
        // behind a close frame or a steady stream of messages.
        if let frame = heldFrame {
            heldFrame = nil
            guard queue([frame]) else { return }
        }
        guard queue(chunks) else { return }
        finishWrite(socketFull: socketFull)
    }

    /// Sends a frame of which only the latest version matters (a pong past
    /// the soft limit: only the latest ping needs an answer, RFC 6455 §5.5.3).
    /// While other bytes wait for the socket it is held instead of queued,
    /// and a newer one replaces it, so a peer that pings without reading
    /// adds one frame to what the limit allows.
    func writeLatest(_ frame: [UInt8]) {
        guard state == .open else { return }
        if outbound.isEmpty {
            guard queue([frame]) else { return }
            finishWrite(socketFull: false)
        } else {
            heldFrame = frame
        }
    }

    /// Queues chunks (encrypted on TLS); false when the connection was dropped.
    private func queue(_ chunks: [[UInt8]]) -> Bool {
        if let tls { return encrypt(chunks, with: tls) }
        for chunk in chunks { outbound.append(chunk) }
        return true
    }

    /// Writes what was queued, unless bytes were already waiting (the socket
    /// is full): then the loop flushes when it is writable, which spares a
    /// failing `sendmsg` per frame queued behind a peer that does not read.
    private func finishWrite(socketFull: Bool) {
        if socketFull {
            updateInterest()
        } else {
            flush()
        }
        if state == .open, queuedSize > limits.hardLimit {
            Log.repeatedWarning(
                "slow-peer",
                "dropped a connection: \(outbound.pendingBytes) bytes in \(outbound.chunkCount) chunks queued for a peer that does not read",
                [("remote", "\(peer)")])
            abort()
        }
    }

    /// The queued bytes with each chunk's cost, against the limits.
    var queuedSize: Int {
        outbound.pendingBytes + outbound.chunkCount * BackpressureLimits.chunkCost
    }

    /// The bytes one more chunk may hold without taking the queue, with the
    /// held frame that would go first, past the soft limit; negative past it.
    /// Plaintext bytes: on TLS each record adds a few, which can take the
    /// queue that far past the limit and only pause reading.
    var roomBelowSoftLimit: Int {
        let held = heldFrame.map { $0.count + BackpressureLimits.chunkCost } ?? 0
        return limits.softLimit - queuedSize - held - BackpressureLimits.chunkCost
    }

    /// Stops or resumes reading for the handler: an HTTP connection does not
    /// read further requests while an answer is pending, so a pipelining
    /// client cannot make it buffer without bound.
    func holdReading(_ held: Bool) {
        guard state == .open, held != readingHeld else { return }
        readingHeld = held
        updateInterest()
    }

    private func flush() {
        do {
            while try outbound.flush(to: socket.rawValue) {
                if state == .flushing {
                    startLingering()
                    break
                }
                guard state == .open, let frame = heldFrame else { break }
                heldFrame = nil
                guard queue([frame]) else { return }
            }
        } catch {
            Log.debug("\(peer): \(error)")
            abort()
            return
        }
        updateInterest()
    }

    /// Records that the peer authenticated (once).
    func markAuthenticated() {
        guard state == .open, !isAuthenticated else { return }
        isAuthenticated = true
        onAuthenticate?()
        onAuthenticate = nil
    }

    // MARK: Closing

    /// Closes after the queued bytes are written, then waits briefly for the
    /// peer to close its side so the last bytes are not lost to a reset.
    func closeAfterFlush() {
        guard state == .open else { return }
        if let tls {
            tls.close()
            queueOutput(of: tls)
        }
        state = .flushing
        // Nothing may follow what was written before the close.
        heldFrame = nil
        closeTimer = loop.schedule(after: Self.closeTimeout) { [weak self] in self?.abort() }
        if outbound.isEmpty { startLingering() } else { updateInterest() }
    }

    /// Closes now, discarding anything queued.
    func abort() {
        guard state != .closed else { return }
        state = .closed
        if let timer = closeTimer { loop.cancel(timer) }
        outbound.discard()
        loop.deregister(socket.rawValue)
        socket.close()
        let handler = self.handler
        self.handler = nil
        handler?.connectionDidClose(self)
        onClose?(self)
        onClose = nil
    }

    /// Closes with a TCP reset and no goodbye (`SO_LINGER` 0), as a dead
    /// network or a crashed server looks to the peer (the test API's faults).
    func reset() {
        guard state != .closed else { return }
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(socket.rawValue, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        abort()
    }

    private func startLingering() {
        state = .lingering
        _ = try? syscall("shutdown") { shutdown(socket.rawValue, Int32(SHUT_WR)) }
        readingPaused = false
        readingHeld = false
        updateInterest()
    }

    // MARK: Events

    func handleEvents(_ events: UInt32) {
        if events & CSHIM_EPOLLOUT != 0 {
            flush()
        }
        guard state != .closed else { return }
        let hangup = events & (CSHIM_EPOLLHUP | CSHIM_EPOLLERR) != 0
        if readingPaused || readingHeld {
            // Not reading, so a hang-up would be reported again and again.
            if hangup { abort() }
        } else if hangup || events & CSHIM_EPOLLIN != 0 {
            read()
        }
    }

    private func read() {
        let buffer = loop.readBuffer
        let result: IOResult<Int>
        do {
            result = try syscall("read") { Glibc.read(socket.rawValue, buffer.baseAddress, buffer.count) }
        } catch {
            Log.debug("\(peer): \(error)")
            abort()
            return
        }
        switch result {
        case .wouldBlock:
            return
        case .processed(0):
            abort()
        case .processed(let count):
            guard state == .open else { return }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0 ..< count])
            if let tls {
                decrypt(bytes, with: tls)
            } else {
                handler?.connection(self, didRead: bytes)
            }
            updateInterest()
        }
    }

    // MARK: TLS

    /// Encrypts `chunks` (as one record when they fit one) into the queue;
    /// false when the session failed and the connection was dropped.
    private func encrypt(_ chunks: [[UInt8]], with tls: TLSSession) -> Bool {
        do {
            let plaintext = chunks.count == 1 ? chunks[0] : Array(chunks.joined())
            try plaintext.withUnsafeBytes { try tls.write($0) }
        } catch {
            Log.debug("\(peer): \(error)")
            abort()
            return false
        }
        queueOutput(of: tls)
        return true
    }

    /// Hands ciphertext to the session and the plaintext it yields to the
    /// handler, which may reuse the loop's buffer: the session copied the input.
    private func decrypt(_ ciphertext: UnsafeRawBufferPointer, with tls: TLSSession) {
        if let refusal = plaintextRefusal {
            plaintextRefusal = nil
            // Every TLS connection starts with a handshake record (type 22).
            guard ciphertext.first == 22 else {
                Log.debug("\(peer): plain text on the TLS port")
                outbound.append(refusal.response)
                closeAfterFlush()
                return
            }
        }
        tls.receive(ciphertext)
        let buffer = loop.readBuffer
        do {
            defer { if onHandshake != nil, tls.isHandshakeComplete { reportHandshake(true) } }
            while state == .open {
                switch try tls.read(into: buffer) {
                case .plaintext(let count):
                    handler?.connection(self, didRead: UnsafeRawBufferPointer(rebasing: buffer[0 ..< count]))
                case .needsInput:
                    queueOutput(of: tls)
                    flush()
                    return
                case .closed:
                    closeAfterFlush()
                    return
                }
            }
        } catch {
            // The session's alert, if it made one, tells the peer why.
            Log.debug("\(peer): \(error)")
            reportHandshake(tls.isHandshakeComplete)
            queueOutput(of: tls)
            closeAfterFlush()
        }
    }

    private func reportHandshake(_ complete: Bool) {
        guard let report = onHandshake else { return }
        onHandshake = nil
        report(complete)
    }

    private func queueOutput(of tls: TLSSession) {
        if let ciphertext = tls.takeOutput() { outbound.append(ciphertext) }
    }

    /// Watches for writability only while bytes are queued, and for
    /// readability only while the peer is not being held back.
    private func updateInterest() {
        guard state != .closed else { return }
        let queued = queuedSize
        if queued > limits.softLimit {
            readingPaused = true
        } else if readingPaused && queued <= limits.softLimit / 2 {
            readingPaused = false
        }
        var events: UInt32 = readingPaused || readingHeld ? 0 : CSHIM_EPOLLIN
        if !outbound.isEmpty { events |= CSHIM_EPOLLOUT }
        guard events != registeredEvents else { return }
        registeredEvents = events
        do {
            try loop.modify(socket.rawValue, events: events)
        } catch {
            Log.warning("\(peer): \(error)")
            abort()
        }
    }
}
