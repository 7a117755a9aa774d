import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// ``OutboundHTTPClient`` against a receiver that offers HTTP/2 by ALPN:
/// nghttpd (Debian `nghttp2-server`), which serves a file for any method and
/// logs every frame (`-v`), each line tagged with its connection (`[id=N]`).
@Suite(.blocking) struct WebhookHTTP2Tests {
    /// nghttpd on a free loopback port, serving `/hook` from a temporary
    /// directory with the certificate; killed when released.
    final class HTTP2Receiver {
        let directory: TemporaryDirectory
        let process: ChildProcess
        let port: Int
        var log: String { (try? String(contentsOfFile: directory.file("nghttpd.log"), encoding: .utf8)) ?? "" }

        init(_ certificate: CertificateFiles) throws {
            let directory = try TemporaryDirectory(prefix: "ringd-h2")
            try "{\"ok\":true}\n".write(toFile: directory.file("hook"), atomically: true, encoding: .utf8)
            let port = try SignalingIntegration.freePorts(1)[0]
            let executable =
                FileManager.default.isExecutableFile(atPath: "/usr/sbin/nghttpd") ? "/usr/sbin/nghttpd" : "nghttpd"
            let process = try ChildProcess(
                executable,
                [
                    "-a", "127.0.0.1", "-d", directory.path, "-v", "\(port)",
                    certificate.privateKeyPath, certificate.certificatePath,
                ],
                stdout: .file(directory.file("nghttpd.log")),
                stderr: .file(directory.file("nghttpd.log")))
            (self.directory, self.port, self.process) = (directory, port, process)
            let listening = waitUntil(timeout: 10) {
                guard process.isRunning, let socket = try? TestSocket(port: port) else { return false }
                socket.close()
                return true
            }
            guard listening else {
                process.kill()
                throw TestSocketError("nghttpd did not listen on \(port): \(log)")
            }
        }

        /// The connection ids of the requests nghttpd received.
        var connectionsWithRequests: Set<String> {
            Set(
                log.split(separator: "\n").filter { $0.contains(":method: POST") }.compactMap { line in
                    line.split(separator: "]").first.map(String.init)
                })
        }

        deinit {
            process.kill()
            directory.remove()
        }
    }

    @Test func http2IsUsedWhenOfferedAndRequestsShareOneConnection() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        let receiver = try HTTP2Receiver(certificate)
        let client = try OutboundHTTPClient(maxConnectionsPerHost: 4, caFile: certificate.certificatePath)
        defer { client.close() }
        let url = "https://localhost:\(receiver.port)/hook"
        let body = Array("{\"event\":\"call.answered\"}".utf8)
        let responses = WebhookResponses()
        let count = 50
        for index in 0 ..< count {
            client.send(
                OutboundRequest(
                    url: url, headers: [("X-Ringd-Signature", "sha256=\(index)")], body: body,
                    timeout: 20),
                completion: responses.completion)
        }
        let all = try #require(responses.wait(for: count, timeout: 30))
        #expect(all.allSatisfy { $0.status == 200 && $0.error == nil && $0.httpVersion == "2" })
        #expect(all.first?.bodyText == "{\"ok\":true}\n")
        let log = receiver.log
        #expect(log.contains("user-agent: ringd/\(RingdVersion.current)"))
        #expect(log.contains("content-type: application/json"))
        #expect(log.contains("x-ringd-signature: sha256=\(count - 1)"))
        #expect(log.contains("recv DATA frame <length=\(body.count)"))
        // Multiplexed: libcurl waited for the first connection's ALPN
        // (CURLOPT_PIPEWAIT) and sent every request on it.
        let connections = receiver.connectionsWithRequests
        print("webhooks: \(count) HTTP/2 requests over \(connections.count) connection(s)")
        #expect(connections.count == 1)
    }
}
