import Foundation
import SignalCore
import SignalProtocol
import SignalSystem
import Synchronization
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// What responders saw, recorded on loop threads and read from the test thread.
final class EventRecorder: Sendable {
    private let opened = Atomic<Int>(0)
    private let messages = Atomic<Int>(0)
    private let closes = Mutex<[WebSocketCloseCode]>([])
    private let outbound = Mutex<(queuedSize: Int, holdsPong: Bool)?>(nil)

    func recordOpen() { opened.add(1, ordering: .relaxed) }
    func recordMessage() { messages.add(1, ordering: .relaxed) }
    func recordClose(_ code: WebSocketCloseCode) { closes.withLock { $0.append(code) } }
    func recordOutbound(_ state: (queuedSize: Int, holdsPong: Bool)) { outbound.withLock { $0 = state } }

    var openCount: Int { opened.load(ordering: .relaxed) }
    var messageCount: Int { messages.load(ordering: .relaxed) }
    var closeCodes: [WebSocketCloseCode] { closes.withLock { $0 } }
    /// What the connection had queued when the last message arrived, as
    /// the outbound limits count it, and whether a pong was held beside it.
    var lastOutbound: (queuedSize: Int, holdsPong: Bool)? { outbound.withLock { $0 } }

    /// Waits until `count` closes were recorded; returns the codes seen by then.
    func waitForCloses(_ count: Int = 1, timeout: Double = 5) -> [WebSocketCloseCode] {
        waitUntil(timeout: timeout) { closeCodes.count >= count }
        return closeCodes
    }
}

/// What a test responder does with a message.
enum ResponderBehavior: Sendable {
    /// Sends every message back.
    case echo
    /// Answers every message with `count` binary messages of `size` bytes,
    /// each starting with its big-endian sequence number (per connection).
    case flood(count: Int, size: Int)
    /// Records what the connection has queued for the peer.
    case reportOutbound
}

/// The responder of test servers: records events and behaves as asked.
final class TestResponder: WebSocketResponder {
    private let recorder: EventRecorder
    private let behavior: ResponderBehavior
    private var sequence: UInt32 = 0

    init(recorder: EventRecorder, behavior: ResponderBehavior) {
        self.recorder = recorder
        self.behavior = behavior
    }

    func webSocketDidOpen(_ socket: WebSocket) { recorder.recordOpen() }

    func webSocket(_ socket: WebSocket, didReceive message: WebSocketMessage) {
        recorder.recordMessage()
        switch behavior {
        case .echo:
            socket.send(message)
        case .flood(let count, let size):
            for _ in 0 ..< count {
                socket.send(WebSocketMessage(kind: .binary, payload: floodPayload(sequence, size: size)))
                sequence += 1
            }
        case .reportOutbound:
            recorder.recordOutbound(socket.outbound)
        }
    }

    func webSocketDidClose(_ socket: WebSocket, code: WebSocketCloseCode) { recorder.recordClose(code) }
}

/// The payload of flood message number `sequence`: the number, then a fill
/// derived from it so reordering or corruption shows.
func floodPayload(_ sequence: UInt32, size: Int) -> [UInt8] {
    var payload = [UInt8](repeating: UInt8(truncatingIfNeeded: sequence &* 31 &+ 7), count: size)
    payload[0] = UInt8(truncatingIfNeeded: sequence >> 24)
    payload[1] = UInt8(truncatingIfNeeded: sequence >> 16)
    payload[2] = UInt8(truncatingIfNeeded: sequence >> 8)
    payload[3] = UInt8(truncatingIfNeeded: sequence)
    return payload
}

/// Serves `/healthz` as ringd does and sends every other path to a
/// ``TestResponder`` as a WebSocket.
final class TestRouter: HTTPRouter {
    private let stats: ServerStats
    private let recorder: EventRecorder
    private let behavior: ResponderBehavior

    init(context: ServerContext, recorder: EventRecorder, behavior: ResponderBehavior) {
        stats = context.stats
        self.recorder = recorder
        self.behavior = behavior
    }

    func route(_ request: HTTPRequest, from _: SocketAddress) -> HTTPRoute {
        if request.path == "/healthz" { return .respond(stats.healthResponse) }
        return .webSocket(TestResponder(recorder: recorder, behavior: behavior))
    }
}

/// The configuration every test server starts from: loopback, port 0, two loops.
func testConfig(_ adjust: (inout ServerConfig) -> Void = { _ in }) -> ServerConfig {
    var config = ServerConfig()
    config.host = "127.0.0.1"
    config.port = 0
    config.threads = 2
    adjust(&config)
    return config
}

/// A flag set once from any thread.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// A real server on a free port, stopped with ``stop()``.
final class TestServer {
    let server: Server
    let recorder = EventRecorder()
    private var stopped = false

    var port: Int { server.address.port }

    /// A real ringd (store in a fresh temporary directory unless the config names one).
    init(ringd config: ServerConfig) throws {
        Self.prepareProcess()
        var config = config
        if config.storePath == ServerConfig().storePath {
            config.storePath = "/tmp/ringd-tests-\(SessionID.random())/ringd.sqlite"
            temporaryDirectory = config.dataDirectory
        }
        server = try Server(config: config, application: try Ringd(config: config))
    }

    /// A server running `application` (its store is the application's business).
    init(config: ServerConfig, application: ServerApplication) throws {
        Self.prepareProcess()
        server = try Server(config: config, application: application)
    }

    /// The store directory this server created, removed when it is released.
    private var temporaryDirectory: String?

    /// A server with routers `makeRouter` makes (one per loop).
    init(config: ServerConfig = testConfig(), makeRouter: @escaping @Sendable (ServerContext) -> HTTPRouter) throws {
        Self.prepareProcess()
        server = try Server(config: config, makeRouter: makeRouter)
    }

    /// A server with a ``TestRouter`` whose WebSocket responders behave as asked.
    init(config: ServerConfig = testConfig(), behavior: ResponderBehavior = .echo) throws {
        Self.prepareProcess()
        let recorder = self.recorder
        server = try Server(config: config) { TestRouter(context: $0, recorder: recorder, behavior: behavior) }
    }

    /// Shuts the server down and waits (bounded) for its loops to exit.
    /// Returns whether they exited within `timeout`.
    @discardableResult
    func stop(timeout: Double = 10) -> Bool {
        if !stopped {
            stopped = true
            server.shutdown()
        }
        return waitForExit(timeout: timeout)
    }

    /// Starts a graceful shutdown without waiting.
    func beginShutdown() {
        stopped = true
        server.shutdown()
    }

    private let exited = Flag()
    private var waiterStarted = false

    /// Whether `server.wait()` returns within `timeout`. One thread calls
    /// `wait()` once, however often this is asked.
    func waitForExit(timeout: Double) -> Bool {
        if !waiterStarted {
            waiterStarted = true
            let server = self.server, exited = self.exited
            Thread {
                server.wait(); exited.set()
            }.start()
        }
        return waitUntil(timeout: timeout) { exited.isSet }
    }

    deinit {
        stop()
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
    }

    /// Once per process: the server writes with `writev`, so a peer that
    /// resets would raise SIGPIPE and kill the test process (the daemon
    /// ignores SIGPIPE in `Daemon.run`); keep logs to errors.
    private static let prepared: Void = {
        signal(SIGPIPE, SIG_IGN)
        Log.level = .error
    }()

    static func prepareProcess() { _ = prepared }
}

/// The parsed JSON body of a response.
func jsonBody(_ response: TestHTTPResponse) throws -> JSONValue {
    try JSONValue.parse(response.body)
}

/// The `connections` count reported by `/healthz` on a fresh connection.
func healthConnections(port: Int) throws -> Int64? {
    let socket = try TestSocket(port: port)
    defer { socket.close() }
    let response = try socket.get("/healthz")
    guard response.status == 200 else { return nil }
    return try jsonBody(response)["connections"]?.integerValue
}

/// Sends `request` on a fresh connection to `port` and expects a refusal:
/// `status`, `Connection: close`, then the server closing TCP. Returns the response.
@discardableResult
func expectClosingRefusal(_ request: String, status: Int, port: Int) throws -> TestHTTPResponse {
    let socket = try TestSocket(port: port)
    defer { socket.close() }
    try socket.send(request)
    let response = try socket.readResponse()
    #expect(response.status == status)
    #expect(response.header("Connection") == "close")
    #expect(try socket.readUntilEOF() == [])
    return response
}
