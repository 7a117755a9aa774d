import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// ``OutboundHTTPClient`` against a real receiver on loopback (ringd's own
/// HTTP server): what arrives, how answers and failures are reported.
@Suite(.blocking) struct WebhookHTTPClientTests {
    @Test func aPostArrivesWithItsBodyAndHeadersIntact() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 2, caFile: nil)
        defer { client.close() }
        // Larger than curl's `Expect: 100-continue` threshold, and not ASCII only.
        let body =
            Array("{\"event\":\"call.ended\",\"note\":\"né ☎\",\"pad\":\"".utf8)
            + [UInt8](repeating: UInt8(ascii: "p"), count: 20_000) + Array("\"}".utf8)
        let request = OutboundRequest(
            url: receiver.url("/ok"),
            headers: [
                ("X-Ringd-Signature", "sha256=00ff"), ("X-Ringd-Event", "call.ended"),
                ("X-Empty", ""),
            ],
            body: body, timeout: 10)
        let response = try #require(client.exchange(request))
        #expect(response.error == nil)
        #expect(response.status == 200)
        #expect(response.httpVersion == "1.1")
        #expect(response.bodyText.contains("\"received\":\(body.count)"))
        #expect(response.elapsed > 0 && response.elapsed < 10)

        let received = try #require(receiver.log.requests.first)
        #expect(receiver.log.requests.count == 1)
        #expect(received.method == "POST")
        #expect(received.path == "/ok")
        #expect(received.body == body)
        #expect(received.headers["Content-Type"] == "application/json")
        #expect(received.headers["Content-Length"] == "\(body.count)")
        #expect(received.headers["User-Agent"] == "ringd/\(RingdVersion.current)")
        #expect(received.headers["X-Ringd-Signature"] == "sha256=00ff")
        #expect(received.headers["X-Ringd-Event"] == "call.ended")
        #expect(received.headers["X-Empty"] == "")
        #expect(received.headers["Expect"] == nil)
        #expect(received.headers["Transfer-Encoding"] == nil)
    }

    @Test func aContentTypeAmongTheHeadersReplacesJSON() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let request = OutboundRequest(
            url: receiver.url("/ok"), headers: [("content-type", "application/cloudevents+json")],
            body: Array("{}".utf8), timeout: 10)
        #expect(try #require(client.exchange(request)).status == 200)
        let received = try #require(receiver.log.requests.first)
        #expect(received.headers.values("Content-Type") == ["application/cloudevents+json"])
    }

    @Test func a500IsReportedAsTheStatusNotAsAnError() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let response = try #require(client.exchange(OutboundRequest(url: receiver.url("/fail"), body: [], timeout: 10)))
        #expect(response.status == 500)
        #expect(response.error == nil)
        #expect(response.bodyText == "receiver broke")
        #expect(receiver.log.requests.first?.headers["Content-Length"] == "0")
    }

    @Test func aRedirectIsAnAnswerAndIsNotFollowed() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let response = try #require(
            client.exchange(OutboundRequest(url: receiver.url("/redirect"), body: [], timeout: 10)))
        #expect(response.status == 302)
        #expect(response.error == nil)
        #expect(receiver.log.count(path: "/ok") == 0)
    }

    @Test func onlyTheFirstKibibyteOfTheAnswerIsKept() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let response = try #require(client.exchange(OutboundRequest(url: receiver.url("/big"), body: [], timeout: 10)))
        #expect(response.status == 200)
        #expect(response.error == nil)
        #expect(response.body == [UInt8](repeating: UInt8(ascii: "x"), count: OutboundHTTPClient.keptBodyBytes))
        // The whole body was read: the connection serves the next request.
        #expect(
            try #require(client.exchange(OutboundRequest(url: receiver.url("/ok"), body: [], timeout: 10))).status
                == 200)
        #expect(receiver.accepted == 1)
    }

    @Test func aReceiverThatNeverAnswersTimesOutWithinTheTimeout() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let response = try #require(
            client.exchange(OutboundRequest(url: receiver.url("/silent"), body: [], timeout: 0.5)))
        #expect(response.error?.code == .timeout)
        #expect(response.status == nil)
        #expect(response.elapsed >= 0.45)
        #expect(response.elapsed < 3)
        #expect(receiver.log.parkedCount == 1)
        #expect(response.error?.message.isEmpty == false)
    }

    @Test func aClosedPortIsAConnectError() throws {
        let (fd, port) = try boundLoopbackSocket()
        defer { close(fd) }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let response = try #require(
            client.exchange(
                OutboundRequest(
                    url: "http://127.0.0.1:\(port)/hook", body: [],
                    timeout: 5)))
        #expect(response.error?.code == .connect)
        #expect(response.error?.curlCode == 7)
        #expect(response.status == nil)
        #expect(response.elapsed < 3)
    }

    @Test func aNameThatDoesNotResolveIsADNSError() throws {
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        // .invalid never resolves (RFC 6761).
        let response = try #require(
            client.exchange(
                OutboundRequest(
                    url: "http://ringd-webhook-test.invalid/hook",
                    body: [], timeout: 20), timeout: 30))
        #expect(response.error?.code == .dns)
        #expect(response.status == nil)
    }

    @Test func anUnusableRequestFailsWithoutBeingSent() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let requests = [
            OutboundRequest(
                url: receiver.url("/ok"), headers: [("X-Injected", "a\r\nX-Evil: 1")], body: [], timeout: 5),
            OutboundRequest(url: receiver.url("/ok"), headers: [("Bad Name", "x")], body: [], timeout: 5),
            OutboundRequest(url: "ftp://127.0.0.1:\(receiver.server.port)/ok", body: [], timeout: 5),
            OutboundRequest(url: "file:///etc/passwd", body: [], timeout: 5),
            OutboundRequest(url: "http://[::1/ok", body: [], timeout: 5),
            OutboundRequest(url: receiver.url("/ok"), body: [], timeout: 0),
        ]
        for request in requests {
            let response = try #require(client.exchange(request))
            #expect(response.error?.code == .request, "\(request.url) \(request.headers)")
            #expect(response.status == nil)
        }
        #expect(receiver.log.requests.isEmpty)
        #expect(receiver.accepted == 0)
    }

    @Test func anUnreadableCAFileIsRefusedAtStart() {
        #expect(throws: OutboundError.self) {
            try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: "/nonexistent/ringd-ca.pem")
        }
    }

    /// The Debian build ringd links: HTTP/2 (nghttp2), OpenSSL, and the
    /// threaded resolver, so name resolution never blocks the curl thread.
    @Test func theLinkedLibcurlHasHTTP2AndTheThreadedResolver() {
        let info = Libcurl.info
        #expect(info.asynchronousDNS)
        #expect(info.threadedResolver)
        #expect(info.http2)
        #expect(info.http2Version != nil)
        #expect(info.tlsVersion?.hasPrefix("OpenSSL") == true)
        #expect(info.threadSafe)
    }
}
