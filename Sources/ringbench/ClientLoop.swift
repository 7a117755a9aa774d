import CShim
import SignalCompression
import SignalCrypto
import SignalProtocol
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A single-threaded epoll loop driving many ``Peer``s: it owns every socket,
/// does the upgrade and authentication, and hands authenticated text
/// messages to `onMessage`.
final class ClientLoop {
    private let epoll: Int32
    private(set) var peers: [Peer] = []
    private let hostHeader: String
    /// The `Host` header of callees, who may connect to another server (`--callee-server`).
    private let calleeHostHeader: String
    /// The context of the peers' TLS sessions; nil for plain text.
    private let tls: TLSContext?
    /// What the peers offer in `Sec-WebSocket-Extensions`; nil offers nothing.
    private let deflateOffer: PerMessageDeflateParameters?
    private var events = [cshim_event](repeating: cshim_event(), count: 256)
    private var readBuffer = [UInt8](repeating: 0, count: 65536)
    private var plaintextBuffer = [UInt8](repeating: 0, count: 16 * 1024)
    /// Called with each frame of an authenticated peer.
    var onMessage: (Peer, ServerFrame) -> Void = { _, _ in }
    /// Called when a peer is authenticated.
    var onReady: (Peer) -> Void = { _ in }
    /// Called when a peer closes or its connect fails, once its failure is recorded.
    var onClosed: (Peer) -> Void = { _ in }
    /// Connects the server refused (ECONNREFUSED), at once or once in progress.
    private(set) var refusedConnects = 0
    /// Peers that failed, with why (connection refused, bad upgrade, auth error, closed).
    private(set) var failures: [String] = []
    /// How many peers are authenticated and open.
    private(set) var readyCount = 0
    /// Server pings answered with a pong.
    private(set) var pingsAnswered = 0
    /// Bytes received from and sent to the server on the sockets (after TLS
    /// and compression: what crosses the wire, without TCP/IP headers).
    private(set) var wireBytes = (received: 0, sent: 0)

    /// A loop for peers of `server` (callees of `calleeServer` when given); with TLS the certificate is not
    /// checked, as the benchmark measures the server, not the client.
    init(server: ServerOptions, calleeServer: ServerEndpoint? = nil) throws {
        epoll = try syscallExpectingResult("epoll_create") { cshim_epoll_create() }
        hostHeader = ServerEndpoint(host: server.host, port: server.port, tls: server.tls).hostHeader
        calleeHostHeader = calleeServer?.hostHeader ?? hostHeader
        tls = server.tls ? try TLSContext.client(verification: .none) : nil
        deflateOffer = server.compress ? .clientOffer : nil
    }

    deinit {
        for peer in peers where peer.phase != .closed { closeDescriptor(peer.fd) }
        closeDescriptor(epoll)
    }

    /// Opens a connection for `uid`, from `source` when given (its port left
    /// to the kernel at connect time); it authenticates as the loop runs.
    func connect(
        to address: SocketAddress, from source: SocketAddress? = nil, uid: String, pair: Int, isCaller: Bool,
        deviceId: String? = nil
    ) throws {
        peers.append(
            try open(
                address, from: source, index: peers.count, uid: uid, pair: pair, isCaller: isCaller,
                deviceId: deviceId))
    }

    /// A slot for a party that is not connected yet: closed until ``reopen(_:to:)``.
    func reserve(uid: String, pair: Int, isCaller: Bool, deviceId: String?) -> Peer {
        let peer = Peer(
            fd: -1, index: peers.count, uid: uid, pair: pair, isCaller: isCaller, deviceId: deviceId,
            tls: nil, offer: nil)
        peer.phase = .closed
        peers.append(peer)
        return peer
    }

    /// A new connection in the slot of closed `peer`, for the same party; a
    /// connect that fails at once fails the peer as one that fails later
    /// does. Not to be called from the loop's callbacks: events of the old
    /// socket still in hand in ``poll(timeoutMS:)`` would reach the new one.
    @discardableResult
    func reopen(_ peer: Peer, to address: SocketAddress) -> Peer? {
        guard peer.phase == .closed, peers[peer.index] === peer else { return nil }
        do {
            let fresh = try open(
                address, from: nil, index: peer.index, uid: peer.uid, pair: peer.pair,
                isCaller: peer.isCaller, deviceId: peer.deviceId)
            peers[peer.index] = fresh
            return fresh
        } catch {
            failures.append("\(peer.uid): \(error)")
            onClosed(peer)
            return nil
        }
    }

    /// Closes `peer` as a failure, so that it is recorded and `onClosed` hears of it.
    func close(_ peer: Peer, reason: String) { fail(peer, reason) }

    private func open(
        _ address: SocketAddress, from source: SocketAddress?, index: Int, uid: String, pair: Int,
        isCaller: Bool, deviceId: String?
    ) throws -> Peer {
        let fd = try syscallExpectingResult("socket") { socket(address.family, CSHIM_SOCK_STREAM, 0) }
        var one: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        _ = setsockopt(fd, CSHIM_IPPROTO_TCP, CSHIM_TCP_NODELAY, &one, size)
        if let source {
            _ = setsockopt(fd, Int32(IPPROTO_IP), IP_BIND_ADDRESS_NO_PORT, &one, size)
            guard source.withSockAddr({ bind(fd, $0, $1) }) == 0 else {
                let code = errno
                closeDescriptor(fd)
                throw SystemError(call: "bind", code: code)
            }
        }
        let result = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if result != 0 && errno != EINPROGRESS {
            let code = errno
            if code == ECONNREFUSED { refusedConnects += 1 }
            closeDescriptor(fd)
            throw SystemError(call: "connect", code: code)
        }
        let session: TLSSession?
        do {
            session = try tls.map { try TLSSession(context: $0) }
        } catch {
            closeDescriptor(fd)
            throw error
        }
        do {
            _ = try syscallExpectingResult("epoll_ctl") {
                cshim_epoll_ctl(epoll, CSHIM_EPOLL_CTL_ADD, fd, CSHIM_EPOLLIN | CSHIM_EPOLLOUT, UInt64(index))
            }
        } catch {
            closeDescriptor(fd)
            throw error
        }
        return Peer(
            fd: fd, index: index, uid: uid, pair: pair, isCaller: isCaller, deviceId: deviceId, tls: session,
            offer: deflateOffer)
    }

    /// Sends `frame` in one masked text frame.
    func send(_ peer: Peer, _ frame: ClientFrame) {
        guard peer.phase != .closed else { return }
        write(peer, WebSocketFrameEncoder.frame(.text, payload: frame.encoded, maskKey: .random()))
    }

    /// Waits up to `timeoutMS` for readiness and handles what is ready.
    func poll(timeoutMS: Int32) {
        let count = events.withUnsafeMutableBufferPointer { cshim_epoll_wait(epoll, $0.baseAddress, 256, timeoutMS) }
        for index in 0 ..< max(0, Int(count)) {
            let event = events[index]
            let peer = peers[Int(event.data)]
            if peer.phase == .closed { continue }
            if event.events & CSHIM_EPOLLOUT != 0 { writable(peer) }
            if event.events & (CSHIM_EPOLLIN | CSHIM_EPOLLERR | CSHIM_EPOLLHUP) != 0 { readable(peer) }
        }
    }

    private func writable(_ peer: Peer) {
        if peer.phase == .connecting {
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(peer.fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                if error == ECONNREFUSED { refusedConnects += 1 }
                return fail(peer, "connect: \(String(cString: strerror(error)))")
            }
            if peer.tls == nil {
                startUpgrade(peer)
            } else {
                peer.phase = .securing
                advanceHandshake(peer)
            }
        }
        flush(peer)
    }

    private func startUpgrade(_ peer: Peer) {
        peer.phase = .upgrading
        write(peer, peer.handshake.request(path: "/v1/ws", host: peer.isCaller ? hostHeader : calleeHostHeader))
    }

    /// Drives the TLS handshake; once it is complete, starts the upgrade.
    private func advanceHandshake(_ peer: Peer) {
        guard let tls = peer.tls else { return }
        do {
            let done = try tls.handshake()
            if let output = tls.takeOutput() { peer.outbound.append(contentsOf: output) }
            if done { startUpgrade(peer) }
        } catch {
            fail(peer, "\(error)")
        }
    }

    /// Queues `bytes` (encrypted with TLS) and writes what the socket takes.
    private func write(_ peer: Peer, _ bytes: [UInt8]) {
        if let tls = peer.tls {
            do {
                try bytes.withUnsafeBytes { try tls.write($0) }
            } catch {
                return fail(peer, "\(error)")
            }
            if let output = tls.takeOutput() { peer.outbound.append(contentsOf: output) }
        } else {
            peer.outbound.append(contentsOf: bytes)
        }
        if !peer.watchingWrite { flush(peer) }
    }

    private func flush(_ peer: Peer) {
        while !peer.outbound.isEmpty {
            let sent = peer.outbound.withUnsafeBytes {
                Glibc.send(peer.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                wireBytes.sent += sent
                peer.outbound.removeFirst(sent)
            } else if sent < 0 && (errno == EAGAIN || errno == EINTR) {
                break
            } else {
                return fail(peer, "send: \(String(cString: strerror(errno)))")
            }
        }
        let wantsWrite = !peer.outbound.isEmpty
        if wantsWrite != peer.watchingWrite {
            peer.watchingWrite = wantsWrite
            let mask = CSHIM_EPOLLIN | (wantsWrite ? CSHIM_EPOLLOUT : 0)
            _ = cshim_epoll_ctl(epoll, CSHIM_EPOLL_CTL_MOD, peer.fd, mask, UInt64(peer.index))
        }
    }

    private func readable(_ peer: Peer) {
        while peer.phase != .closed {
            let count = readBuffer.withUnsafeMutableBytes { recv(peer.fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return fail(peer, "server closed the connection") }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { return }
                return fail(peer, "recv: \(String(cString: strerror(errno)))")
            }
            wireBytes.received += count
            if let tls = peer.tls {
                readBuffer.withUnsafeBytes { tls.receive(UnsafeRawBufferPointer(rebasing: $0[0 ..< count])) }
                decrypt(peer, tls)
            } else {
                received(peer, readBuffer[0 ..< count])
            }
            if count < readBuffer.count { return }
        }
    }

    /// Feeds the plaintext the session yields to the peer, after finishing
    /// its handshake if it is not yet complete.
    private func decrypt(_ peer: Peer, _ tls: TLSSession) {
        if peer.phase == .securing {
            advanceHandshake(peer)
            flush(peer)
            if peer.phase == .securing { return }
        }
        while peer.phase != .closed {
            let result: TLSSession.ReadResult
            do {
                result = try plaintextBuffer.withUnsafeMutableBytes { try tls.read(into: $0) }
            } catch {
                return fail(peer, "\(error)")
            }
            switch result {
            case .plaintext(let count): received(peer, plaintextBuffer[0 ..< count])
            case .needsInput: return
            case .closed: return fail(peer, "server sent close_notify")
            }
        }
    }

    private func received(_ peer: Peer, _ bytes: ArraySlice<UInt8>) {
        if peer.phase == .upgrading {
            peer.upgradeResponse.append(contentsOf: bytes)
            upgrade(peer)
        } else {
            peer.reader.append(contentsOf: bytes)
        }
        drainMessages(peer)
    }

    private func upgrade(_ peer: Peer) {
        let end: [UInt8] = [13, 10, 13, 10]
        guard let range = peer.upgradeResponse.firstRange(of: end) else { return }
        let agreed: PerMessageDeflateParameters?
        do {
            let head = try HTTPResponseHead.parse(peer.upgradeResponse[..<range.lowerBound])
            agreed = try peer.handshake.validate(head, accept: Crypto.webSocketAccept(forKey: peer.handshake.key))
        } catch {
            return fail(peer, "upgrade refused: \(error)")
        }
        if let agreed {
            peer.reader = WebSocketMessageReader(
                role: .client, maxMessageBytes: Peer.maxMessageBytes,
                perMessageDeflate: true)
            peer.decompressor = MessageDecompressor(contextTakeover: agreed.serverToClient.contextTakeover, cache: nil)
        }
        peer.reader.append(contentsOf: peer.upgradeResponse[range.upperBound...])
        peer.upgradeResponse = []
        peer.phase = .authenticating
        send(
            peer,
            ClientFrame(
                id: "a",
                request: .auth(
                    .authKey(uid: peer.uid, key: "ringd-dev-auth-key"),
                    deviceId: peer.deviceId)))
    }

    private func drainMessages(_ peer: Peer) {
        while peer.phase == .authenticating || peer.phase == .ready {
            let event: WebSocketMessageReader.Event?
            do { event = try peer.reader.next(inflater: &peer.decompressor) } catch {
                return fail(peer, "bad frame: \(error)")
            }
            switch event {
            case nil:
                return
            case .message(let message)?:
                let frame: ServerFrame
                do {
                    frame = try ServerFrame.parse(message.payload)
                } catch {
                    return fail(peer, "bad message: \(error.message): \(message.text)")
                }
                if peer.phase == .ready {
                    onMessage(peer, frame)
                } else {
                    authenticated(peer, frame)
                }
            case .ping(let payload)?:
                write(peer, WebSocketFrameEncoder.frame(.pong, payload: payload, maskKey: .random()))
                pingsAnswered += 1
            case .pong?:
                continue
            case .close(let code, let reason)?:
                fail(peer, "server closed: \(code.map { "\($0.rawValue)" } ?? "-") \(reason)")
            }
        }
    }

    /// The auth result arrived: the peer is ready, and remembers the live
    /// call an earlier run or a lost connection left it in.
    private func authenticated(_ peer: Peer, _ frame: ServerFrame) {
        guard case .result(_, .success(let data)) = frame,
            case .authenticated(let authentication)? = try? ResultData(json: data, answering: .auth)
        else {
            return fail(peer, "auth failed: \(frame)")
        }
        peer.phase = .ready
        readyCount += 1
        peer.activeCall = authentication.activeCall
        onReady(peer)
    }

    private func fail(_ peer: Peer, _ reason: String) {
        guard peer.phase != .closed else { return }
        failures.append("\(peer.uid): \(reason)")
        if peer.phase == .ready { readyCount -= 1 }
        peer.phase = .closed
        closeDescriptor(peer.fd)
        onClosed(peer)
    }
}
