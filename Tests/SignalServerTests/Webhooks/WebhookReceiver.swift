import Foundation
import SignalProtocol
import SignalSystem
import Synchronization
import TestSupport
import Testing

@testable import SignalServer

/// A webhook request as the receiver saw it.
struct ReceivedWebhook: Sendable {
    var method: String
    var path: String
    var headers: HTTPHeaders
    var body: [UInt8]
}

/// What every loop's ``WebhookReceiverRouter`` saw, and the sinks of the
/// requests it never answers.
final class WebhookReceiverLog: Sendable {
    private let received = Mutex<[ReceivedWebhook]>([])
    private let parked = Mutex<[HTTPResponseSink]>([])

    func record(_ request: HTTPRequest) {
        received.withLock {
            $0.append(
                ReceivedWebhook(
                    method: request.method, path: request.path, headers: request.headers,
                    body: request.body))
        }
    }

    func park(_ sink: HTTPResponseSink) { parked.withLock { $0.append(sink) } }

    var requests: [ReceivedWebhook] { received.withLock { $0 } }
    var parkedCount: Int { parked.withLock { $0.count } }
    func count(path: String) -> Int { received.withLock { $0.filter { $0.path == path }.count } }
}

/// A webhook receiver on ringd's own HTTP server. Paths:
/// - `/ok`: 200 with a short JSON body;
/// - `/fail`: 500 with `receiver broke` in the body;
/// - `/flaky`: 500 to the first two attempts of an event (by `webhook-id`), then 200;
/// - `/redirect`: 302 to `/ok`;
/// - `/big`: 200 with a 64 KiB body;
/// - `/silent`, `/silent2`: never answer (the response is deferred and never sent).
final class WebhookReceiverRouter: HTTPRouter {
    static let bigBodySize = 64 * 1024
    private let log: WebhookReceiverLog

    init(log: WebhookReceiverLog) { self.log = log }

    func route(_ request: HTTPRequest, from _: SocketAddress) -> HTTPRoute {
        log.record(request)
        switch request.path {
        case "/ok":
            return .respond(.json(.ok, .object([("received", .integer(Int64(request.body.count)))])))
        case "/fail":
            return .respond(HTTPResponse(status: .internalServerError, body: Array("receiver broke".utf8)))
        case "/redirect":
            return .respond(HTTPResponse(status: HTTPStatus(302, "Found"), headers: HTTPHeaders([("Location", "/ok")])))
        case "/big":
            return .respond(
                HTTPResponse(status: .ok, body: [UInt8](repeating: UInt8(ascii: "x"), count: Self.bigBodySize)))
        case "/flaky":
            // 500 to the first two attempts of each event, then 200.
            let attempts = log.requests.filter {
                $0.path == "/flaky" && $0.headers["webhook-id"] == request.headers["webhook-id"]
            }
            return .respond(
                attempts.count <= 2
                    ? HTTPResponse(status: .internalServerError, body: Array("not yet".utf8))
                    : .json(.ok, .object([])))
        case "/silent", "/silent2":
            let log = self.log
            return .later { sink in log.park(sink) }
        default:
            return .respond(.error(.notFound, "no hook at \(request.path)"))
        }
    }
}

/// A ringd HTTP server answering as ``WebhookReceiverRouter`` does; TLS
/// when given a certificate. `accepted` counts its TCP connections.
final class WebhookReceiver {
    let log = WebhookReceiverLog()
    let server: TestServer
    let scheme: String

    init(tls certificate: CertificateFiles? = nil) throws {
        let log = self.log
        server = try TestServer(
            config: testConfig {
                $0.tlsCertificatePath = certificate?.certificatePath
                $0.tlsPrivateKeyPath = certificate?.privateKeyPath
                $0.handshakeTimeout = 30
            }
        ) { _ in WebhookReceiverRouter(log: log) }
        scheme = certificate == nil ? "http" : "https"
    }

    /// The URL of `path`, by the name `localhost` over TLS (the name the
    /// certificate holds) and by address otherwise.
    func url(_ path: String) -> String {
        "\(scheme)://\(scheme == "https" ? "localhost" : "127.0.0.1"):\(server.port)\(path)"
    }

    var accepted: Int { server.server.stats.acceptedConnections }

    func stop() { server.stop() }
}

/// Completions as they come, on the curl thread; waited for with a deadline.
final class WebhookResponses: Sendable {
    private let responses = Mutex<[OutboundResponse]>([])
    private let arrived = DispatchSemaphore(value: 0)

    /// The completion to pass to `send`.
    var completion: @Sendable (OutboundResponse) -> Void {
        { [self] response in
            responses.withLock { $0.append(response) }
            arrived.signal()
        }
    }

    /// The first `count` responses, in completion order, or nil if fewer
    /// came within `timeout` seconds.
    func wait(for count: Int, timeout: Double = 10) -> [OutboundResponse]? {
        let deadline = DispatchTime.now() + timeout
        for _ in 0 ..< count {
            guard arrived.wait(timeout: deadline) == .success else { return nil }
        }
        return responses.withLock { Array($0.prefix(count)) }
    }

    var all: [OutboundResponse] { responses.withLock { $0 } }
}

extension OutboundHTTPClient {
    /// Sends `request` and waits for its response (nil after `timeout` seconds).
    func exchange(_ request: OutboundRequest, timeout: Double = 10) -> OutboundResponse? {
        let responses = WebhookResponses()
        send(request, completion: responses.completion)
        return responses.wait(for: 1, timeout: timeout)?.first
    }
}
