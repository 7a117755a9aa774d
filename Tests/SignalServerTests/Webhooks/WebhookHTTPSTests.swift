import Foundation
import TestSupport
import Testing

@testable import SignalServer

/// ``OutboundHTTPClient`` over TLS against ringd's TLS server with a
/// generated certificate: verified against the CA file, refused without it.
@Suite(.blocking) struct WebhookHTTPSTests {
    @Test func httpsWithTheTestCAIsVerifiedAndReusesItsConnections() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        let receiver = try WebhookReceiver(tls: certificate)
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 2, caFile: certificate.certificatePath)
        defer { client.close() }
        let body = Array("{\"event\":\"call.ringing\"}".utf8)
        let first = try #require(
            client.exchange(
                OutboundRequest(
                    url: receiver.url("/ok"),
                    headers: [("X-Ringd-Signature", "sha256=ab")],
                    body: body, timeout: 10)))
        #expect(first.error == nil)
        #expect(first.status == 200)
        // HTTP/2 is offered by ALPN; ringd's server answers http/1.1.
        #expect(first.httpVersion == "1.1")
        let received = try #require(receiver.log.requests.first)
        #expect(received.body == body)
        #expect(received.headers["X-Ringd-Signature"] == "sha256=ab")

        let responses = WebhookResponses()
        for _ in 0 ..< 20 {
            client.send(
                OutboundRequest(url: receiver.url("/ok"), body: body, timeout: 10), completion: responses.completion)
        }
        let all = try #require(responses.wait(for: 20, timeout: 30))
        #expect(all.allSatisfy { $0.status == 200 && $0.error == nil })
        print("webhooks: 21 HTTPS requests over \(receiver.accepted) TLS connections (at most 2 per host)")
        #expect(receiver.accepted <= 2)
    }

    @Test func httpsWithoutTheCAFailsVerification() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        let receiver = try WebhookReceiver(tls: certificate)
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let response = try #require(client.exchange(OutboundRequest(url: receiver.url("/ok"), body: [], timeout: 10)))
        #expect(response.error?.code == .tls)
        #expect(response.status == nil)
        #expect(receiver.log.requests.isEmpty)
    }

    @Test func aCertificateForAnotherNameFailsVerification() throws {
        let certificate = try CertificateFiles(names: ["DNS:hooks.example.com"])
        defer { certificate.remove() }
        let receiver = try WebhookReceiver(tls: certificate)
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: certificate.certificatePath)
        defer { client.close() }
        let response = try #require(client.exchange(OutboundRequest(url: receiver.url("/ok"), body: [], timeout: 10)))
        #expect(response.error?.code == .tls)
        #expect(receiver.log.requests.isEmpty)
    }
}
