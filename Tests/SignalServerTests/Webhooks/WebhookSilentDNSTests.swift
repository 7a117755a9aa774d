import Foundation
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// A name server that never answers must hold up nothing but the request
/// that waits for it: not other receivers, not `close()`. This needs
/// `/etc/resolv.conf` to name a server that drops every query, which a test
/// cannot arrange inside its own process, so it runs only when asked
/// (as root; the test itself binds the silent server on 127.0.0.77:53):
///
///     printf 'nameserver 127.0.0.77\noptions timeout:5 attempts:1\n' > /tmp/resolv.silent
///     RINGD_TESTS_SILENT_DNS=127.0.0.77 unshare -m sh -c \
///       'mount --bind /tmp/resolv.silent /etc/resolv.conf && swift test --skip-build --filter WebhookSilentDNS'
///
/// Measured so: the lookup's request failed with TIMEOUT at its 1 s
/// timeout, requests to loopback meanwhile took under 1 ms, and `close()`
/// with a lookup in flight returned in under 1 ms. Without
/// `CURLOPT_QUICK_EXIT` the timeout came only when getaddrinfo gave up (5 s),
/// the curl thread waiting for the resolver thread meanwhile, and so did
/// `close()`.
@Suite(.blocking, .enabled(if: ProcessInfo.processInfo.environment["RINGD_TESTS_SILENT_DNS"] != nil))
struct WebhookSilentDNSTests {
    /// A UDP socket on `address`:53 that reads nothing and answers nothing.
    private func silentNameServer(_ address: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = UInt16(53).bigEndian
        socketAddress.sin_addr.s_addr = inet_addr(address)
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, bound == 0 else {
            throw TestSocketError("cannot bind \(address):53: \(String(cString: strerror(errno)))")
        }
        return fd
    }

    @Test func aSilentNameServerHoldsUpOnlyItsOwnRequest() throws {
        let nameServer = try silentNameServer(
            ProcessInfo.processInfo.environment["RINGD_TESTS_SILENT_DNS"] ?? "127.0.0.77")
        defer { close(nameServer) }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 1, caFile: nil)
        defer { client.close() }
        let lookup = WebhookResponses()
        client.send(
            OutboundRequest(url: "http://hooks.example.org/a", body: [], timeout: 1), completion: lookup.completion)
        for _ in 0 ..< 3 {
            let response = try #require(
                client.exchange(OutboundRequest(url: receiver.url("/ok"), body: [], timeout: 5)))
            #expect(response.status == 200)
            #expect(response.elapsed < 0.5)
        }
        let timedOut = try #require(lookup.wait(for: 1, timeout: 10)?.first)
        #expect(timedOut.error?.code == .timeout)
        #expect(timedOut.elapsed < 2)

        let closing = WebhookResponses()
        client.send(
            OutboundRequest(url: "http://hooks.example.org/b", body: [], timeout: 30), completion: closing.completion)
        #expect(
            try #require(client.exchange(OutboundRequest(url: receiver.url("/ok"), body: [], timeout: 5))).status == 200
        )
        let started = monotonicSeconds()
        client.close()
        #expect(monotonicSeconds() - started < 1)
        #expect(closing.all.first?.error?.code == .closed)
    }
}
