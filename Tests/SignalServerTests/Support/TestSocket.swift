import SignalSystem
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Why a test socket operation failed.
struct TestSocketError: Error, CustomStringConvertible {
    let description: String
    /// The `errno` of the failed call, where one failed (`connect`).
    let code: Int32?
    init(_ description: String, code: Int32? = nil) {
        self.description = description
        self.code = code
    }
}

/// Seconds on the monotonic clock, for deadlines and elapsed times in tests.
func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Waits until `condition` holds, checking every few milliseconds, for at
/// most `timeout` seconds. Returns whether it held in time.
@discardableResult
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + timeout
    while true {
        if condition() { return true }
        if monotonicSeconds() >= deadline { return false }
        usleep(2_000)
    }
}

/// An HTTP response as read by ``TestSocket/readResponse(timeout:)``.
struct TestHTTPResponse {
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first value of `name`, compared case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking TCP client for tests: connects to 127.0.0.1, sends everything it
/// is given, and receives with a deadline (`poll`). Bytes received but not yet
/// consumed stay in ``buffer`` (e.g. WebSocket frames after a 101 response).
final class TestSocket {
    private(set) var fd: Int32
    /// Received bytes not consumed yet.
    var buffer: [UInt8] = []
    /// Whether the server closed its side (read returned 0) or reset.
    private(set) var sawEOF = false

    /// Connects to `127.0.0.1:port`. `receiveBufferSize` shrinks SO_RCVBUF
    /// before connecting (for tests of peers that do not read); `source`, an
    /// IPv4 address of this machine, is the connection's own address (a
    /// peer beyond loopback, as the server sees it, over loopback still).
    init(port: Int, receiveBufferSize: Int? = nil, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError("socket: \(String(cString: strerror(errno)))") }
        if let size = receiveBufferSize {
            var value = Int32(size)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        func give(up what: String) -> TestSocketError {
            let code = errno
            Glibc.close(fd)
            fd = -1
            return TestSocketError("\(what): \(String(cString: strerror(code)))", code: code)
        }
        if let source {
            let local = try SocketAddress.resolve(host: source, port: 0)
            guard local.withSockAddr({ bind(fd, $0, $1) }) == 0 else { throw give(up: "bind to \(source)") }
        }
        let server = try SocketAddress.resolve(host: "127.0.0.1", port: port)
        guard server.withSockAddr({ connect(fd, $0, $1) }) == 0 else { throw give(up: "connect to port \(port)") }
    }

    deinit { close() }

    /// An IPv4 address of this machine's outside loopback (an interface
    /// that is up), or nil when it has none.
    static func localAddressBeyondLoopback() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                current.pointee.ifa_flags & UInt32(IFF_UP) != 0,
                current.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0
            else { continue }
            var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            guard inet_ntop(AF_INET, &ipv4, &text, socklen_t(text.count)) != nil else { continue }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }

    func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    /// Shuts down the write side (sends FIN).
    func shutdownWrite() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    // MARK: Sending

    /// Sends all of `bytes` (blocking).
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw TestSocketError("send: \(String(cString: strerror(errno)))")
            }
            sent += result
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends every byte in its own `send` call, pausing briefly between them
    /// so the server is likely to see many separate reads.
    func sendByteByByte(_ bytes: [UInt8]) throws {
        for byte in bytes {
            try send([byte])
            usleep(300)
        }
    }

    // MARK: Receiving

    /// Reads once into ``buffer``, waiting at most until `deadline`. Returns
    /// the number of bytes read: 0 means EOF (or a reset). Throws on timeout.
    @discardableResult
    func receiveSome(until deadline: Double, maxBytes: Int = 65536) throws -> Int {
        if sawEOF { return 0 }
        while true {
            let left = deadline - monotonicSeconds()
            guard left > 0 else { throw TestSocketError("timed out waiting for data") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(max(1, (left * 1000).rounded(.up))))
            if ready < 0 {
                if errno == EINTR { continue }
                throw TestSocketError("poll: \(String(cString: strerror(errno)))")
            }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: maxBytes)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == ECONNRESET {
                    sawEOF = true
                    return 0
                }
                throw TestSocketError("recv: \(String(cString: strerror(errno)))")
            }
            if count == 0 {
                sawEOF = true
                return 0
            }
            buffer.append(contentsOf: chunk[0 ..< count])
            return count
        }
    }

    /// Reads until `count` bytes are buffered, then takes them.
    func receive(exactly count: Int, timeout: Double = 5) throws -> [UInt8] {
        let deadline = monotonicSeconds() + timeout
        while buffer.count < count {
            if try receiveSome(until: deadline) == 0 {
                throw TestSocketError("EOF after \(buffer.count) of \(count) bytes")
            }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0 ..< count])
    }

    /// Reads until the server closes the connection; returns everything
    /// received before the EOF (including what was already buffered).
    func readUntilEOF(timeout: Double = 5) throws -> [UInt8] {
        let deadline = monotonicSeconds() + timeout
        while try receiveSome(until: deadline) > 0 {}
        defer { buffer = [] }
        return buffer
    }

    /// Whether the server closes the connection within `timeout` seconds
    /// (any bytes received meanwhile are kept in ``buffer``).
    func closesWithin(_ timeout: Double) -> Bool {
        let deadline = monotonicSeconds() + timeout
        while true {
            do {
                if try receiveSome(until: deadline) == 0 { return true }
            } catch {
                return false
            }
        }
    }

    /// True when nothing arrives and the connection stays open for `seconds`.
    func staysQuiet(for seconds: Double) -> Bool {
        let before = buffer.count
        let deadline = monotonicSeconds() + seconds
        do {
            while try receiveSome(until: deadline) > 0 {}
            return false
        } catch {
            return buffer.count == before && !sawEOF
        }
    }

    // MARK: HTTP

    /// Reads one HTTP response: the head, then a body of `Content-Length` bytes.
    func readResponse(timeout: Double = 5) throws -> TestHTTPResponse {
        let deadline = monotonicSeconds() + timeout
        let terminator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while true {
            if buffer.count >= 4 {
                end = (0 ... buffer.count - 4).first { buffer[$0 ..< $0 + 4].elementsEqual(terminator) }
            }
            if end != nil { break }
            if try receiveSome(until: deadline) == 0 {
                throw TestSocketError(
                    "EOF before a complete response head; got \(String(decoding: buffer, as: UTF8.self).debugDescription)"
                )
            }
        }
        let headEnd = end!
        let head = String(decoding: buffer[0 ..< headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else {
            throw TestSocketError("malformed status line \(statusLine.debugDescription)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw TestSocketError("bad header line \(line)") }
            headers.append(
                (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: " ")))
        }
        var response = TestHTTPResponse(
            status: status, reason: parts.count > 2 ? String(parts[2]) : "",
            headers: headers, body: [])
        if let lengthText = response.header("Content-Length") {
            guard let length = Int(lengthText) else { throw TestSocketError("bad Content-Length \(lengthText)") }
            response.body = try receive(exactly: length, timeout: max(0.01, deadline - monotonicSeconds()))
        }
        return response
    }

    /// Sends a GET request for `path` (keep-alive) and reads the response.
    func get(_ path: String, extraHeaders: String = "") throws -> TestHTTPResponse {
        try send("GET \(path) HTTP/1.1\r\nHost: test\r\n\(extraHeaders)\r\n")
        return try readResponse()
    }
}

extension String {
    /// The text without leading and trailing `characters`.
    func trimmingCharacters(in characters: String) -> String {
        let set = Set(characters)
        guard let first = firstIndex(where: { !set.contains($0) }),
            let last = lastIndex(where: { !set.contains($0) })
        else { return "" }
        return String(self[first ... last])
    }
}
