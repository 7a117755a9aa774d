import Foundation
import SignalCompression
import SignalProtocol
import SignalServer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A one-connection WebSocket server that follows a script, for behaviour a
/// real ringd never shows (silence, late results, broken frames).
final class ScriptedServer: Sendable {
    let port: Int
    private let finished = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// Listens on a free loopback port and runs `script` on a thread with the first connection.
    init(_ script: @escaping @Sendable (ScriptedPeer) throws -> Void) throws {
        let listener = try SilentListener()
        port = listener.port
        Thread { [self] in
            if let peer = ScriptedPeer(accepting: listener) { try? script(peer) }
            markDone()
        }.start()
    }

    private func markDone() {
        let waiter = finished.withLock { state in
            state.done = true
            return state.waiter
        }
        waiter?.resume()
    }

    /// Waits until the script has returned.
    func waitUntilDone() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { state in
                if !state.done { state.waiter = continuation }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}

/// The server end of one scripted connection (blocking, with deadlines).
final class ScriptedPeer {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var reader = WebSocketMessageReader(role: .server, maxMessageBytes: 1 << 20)
    private var decompressor: MessageDecompressor?
    /// The client's `Sec-WebSocket-Extensions` offer, once upgraded.
    private(set) var offer: String?

    struct Failure: Error {}

    /// Accepts one connection within 5 s.
    init?(accepting listener: SilentListener) {
        var entry = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 5000) == 1 else { return nil }
        fd = accept(listener.fd, nil, nil)
        guard fd >= 0 else { return nil }
    }

    deinit { close(fd) }

    /// Reads the upgrade request and answers 101 with the right accept value,
    /// and with `extensions` as `Sec-WebSocket-Extensions` when given; with
    /// `inflate`, compressed messages from the client are inflated.
    func upgrade(extensions: String? = nil, inflate: Bool = false) throws {
        var end: Int?
        while end == nil {
            try fill()
            end = buffer.indices.dropLast(3).first { buffer[$0 ..< $0 + 4].elementsEqual([13, 10, 13, 10]) }
        }
        let head = String(decoding: buffer[0 ..< end!], as: UTF8.self)
        buffer.removeFirst(end! + 4)
        guard let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("sec-websocket-key:") })
        else { throw Failure() }
        let key = String(line.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces)
        offer = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-extensions:") }
            .map { String($0.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces) }
        if inflate {
            reader = WebSocketMessageReader(role: .server, maxMessageBytes: 1 << 20, perMessageDeflate: true)
            decompressor = MessageDecompressor(contextTakeover: true, cache: nil)
        }
        try send(
            Array(
                ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: key))\r\n"
                    + (extensions.map { "Sec-WebSocket-Extensions: \($0)\r\n" } ?? "") + "\r\n").utf8))
    }

    /// The next event from the client.
    func next() throws -> WebSocketMessageReader.Event {
        while true {
            if !buffer.isEmpty {
                reader.append(contentsOf: buffer)
                buffer = []
            }
            if let event = try reader.next(inflater: &decompressor) { return event }
            try fill()
        }
    }

    /// The next text message from the client, as JSON.
    func nextJSON() throws -> JSONValue {
        guard case .message(let message) = try next() else { throw Failure() }
        return try JSONValue.parse(message.payload)
    }

    /// Upgrades, then answers the auth frame with success for `uid`/`deviceId`.
    func acceptAuth(uid: String = "alice", deviceId: String = "laptop") throws {
        try upgrade()
        try answerAuth(uid: uid, deviceId: deviceId)
    }

    /// Answers the auth frame with success for `uid`/`deviceId`.
    func answerAuth(uid: String = "alice", deviceId: String = "laptop") throws {
        let auth = try nextJSON()
        try sendJSON(
            .object([
                ("type", .string("result")), ("id", auth["id"] ?? .null), ("ok", .bool(true)),
                (
                    "data",
                    .object([
                        ("user", .object([("uid", .string(uid))])),
                        ("deviceId", .string(deviceId)), ("activeCall", .null),
                    ])
                ),
            ]))
    }

    /// Sends a text frame with `json`.
    func sendJSON(_ json: JSONValue) throws {
        try send(WebSocketFrameEncoder.frame(.text, payload: Array(json.serialized.utf8)))
    }

    /// Sends raw bytes.
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw Failure() }
            sent += count
        }
    }

    private func fill() throws {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 5000) == 1 else { throw Failure() }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw Failure() }
        buffer.append(contentsOf: chunk[0 ..< count])
    }
}
