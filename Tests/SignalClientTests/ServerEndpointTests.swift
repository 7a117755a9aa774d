import SignalClient
import SignalProtocol
import TestSupport
import Testing

@Suite("ServerEndpoint parsing", .prompt)
struct ServerEndpointTests {
    @Test(
        "every accepted form",
        arguments: [
            ("ws://example.com:9000", "example.com", 9000, "/v1/ws"),
            ("ws://example.com:9000/v1/ws", "example.com", 9000, "/v1/ws"),
            ("ws://example.com:9000/", "example.com", 9000, "/v1/ws"),
            ("http://127.0.0.1:8080", "127.0.0.1", 8080, "/v1/ws"),
            ("HTTP://127.0.0.1:8080", "127.0.0.1", 8080, "/v1/ws"),
            ("localhost:8787", "localhost", 8787, "/v1/ws"),
            ("localhost", "localhost", 8787, "/v1/ws"),
            ("ws://localhost", "localhost", 8787, "/v1/ws"),
            ("ws://[::1]:9000/custom", "::1", 9000, "/custom"),
            ("[::1]", "::1", 8787, "/v1/ws"),
            ("  ws://host:1/v1/ws?deviceId=x  ", "host", 1, "/v1/ws?deviceId=x"),
        ])
    func accepted(_ input: String, _ host: String, _ port: Int, _ path: String) throws {
        let endpoint = try ServerEndpoint(url: input)
        #expect(endpoint.host == host)
        #expect(endpoint.port == port)
        #expect(endpoint.path == path)
    }

    @Test("webSocketURL and hostAndPort")
    func urls() throws {
        #expect(try ServerEndpoint(url: "localhost:9").webSocketURL == "ws://localhost:9/v1/ws")
        #expect(try ServerEndpoint(url: "http://[::1]:9").webSocketURL == "ws://[::1]:9/v1/ws")
        #expect(try ServerEndpoint(url: "[::1]:9").hostAndPort == "[::1]:9")
    }

    @Test(
        "wss:// and https:// speak TLS, on port 8443 unless named",
        arguments: [
            ("wss://example.com", 8443, "/v1/ws"), ("https://example.com:443/v1/ws", 443, "/v1/ws"),
            ("WSS://[::1]:9/x", 9, "/x"),
        ])
    func tls(_ input: String, _ port: Int, _ path: String) throws {
        let endpoint = try ServerEndpoint(url: input)
        #expect(endpoint.isSecure)
        #expect(endpoint.port == port)
        #expect(endpoint.path == path)
        #expect(endpoint.webSocketURL.hasPrefix("wss://"))
        #expect(try !ServerEndpoint(url: "ws://example.com").isSecure)
    }

    @Test(
        "malformed URLs give CLIENT_BAD_URL",
        arguments: [
            "", "ws://", "ftp://host", "ws://host:0", "ws://host:65536", "ws://host:x", "ws://host:",
            "ws://user@host", "::1", "ws://[::1", "ws://[::1]x", "ws://host:1path", "ws://ho st:1", "ws://host/a b",
            "ws://host/#frag",
        ])
    func malformed(_ input: String) {
        #expect {
            try ServerEndpoint(url: input)
        } throws: { error in
            (error as? ClientError)?.code == .badURL
        }
    }

    @Test("a comma-separated list parses in order, blanks around entries ignored")
    func list() throws {
        let endpoints = try ServerEndpoint.list(parsing: "ws://a:8787, wss://b:9/x ,localhost")
        #expect(
            endpoints == [
                ServerEndpoint(host: "a", port: 8787), ServerEndpoint(host: "b", port: 9, path: "/x", isSecure: true),
                ServerEndpoint(host: "localhost"),
            ])
        #expect(try ServerEndpoint.list(parsing: "[::1]:9") == [ServerEndpoint(host: "::1", port: 9)])
    }

    @Test(
        "a bad entry of a list gives CLIENT_BAD_URL naming that entry",
        arguments: [
            ("ws://a:1,ws://b:0", #"bad server URL "ws://b:0": invalid port "0" (1 to 65535)"#),
            (
                "ftp://a, ws://b",
                #"bad server URL "ftp://a": unsupported scheme "ftp" (use ws://, wss://, http:// or https://)"#
            ),
            ("ws://a:1,,ws://b:2", #"empty server URL in "ws://a:1,,ws://b:2""#),
            ("ws://a:1,", #"empty server URL in "ws://a:1,""#),
            ("", #"empty server URL in """#),
        ])
    func badList(_ input: String, _ message: String) {
        #expect {
            try ServerEndpoint.list(parsing: input)
        } throws: { error in
            (error as? ClientError)?.code == .badURL && (error as? ClientError)?.message == message
        }
    }

    @Test("the failure of every endpoint keeps the last code and names each endpoint; a lone one stays as it is")
    func everyEndpointFailed() {
        let a = ServerEndpoint(host: "a", port: 1), b = ServerEndpoint(host: "b", port: 2)
        let refused = ClientError(code: .connectFailed, message: "connect to a:1: refused")
        let upgrade = ClientError(code: .handshakeFailed, message: "HTTP 503", httpStatus: 503)
        let both = ClientError(everyEndpointFailed: [(a, refused), (b, upgrade)])
        #expect(
            both
                == ClientError(
                    code: .handshakeFailed,
                    message: "every server failed: ws://a:1/v1/ws: connect to a:1: refused; ws://b:2/v1/ws: HTTP 503",
                    httpStatus: 503))
        #expect(ClientError(everyEndpointFailed: [(a, refused)]) == refused)
        #expect(ClientError(everyEndpointFailed: []).code == .badURL)
    }

    @Test("a REST request moves on to the next server only when one was not reached or answered 503")
    func restFailover() {
        let moveOn = [
            ClientError(code: .connectFailed, message: "refused"), ClientError(code: .tlsFailed, message: "tls"),
            ClientError(code: .timeout, message: "slow"), ClientError(code: .closed, message: "gone"),
            ClientError(code: .http, message: "full", httpStatus: 503),
        ]
        let answers = [
            ClientError(code: .http, message: "bad key", httpStatus: 401),
            ClientError(code: .http, message: "broke", httpStatus: 500),
            ClientError(code: .protocolViolation, message: "no token"),
        ]
        #expect(moveOn.filter { !$0.isWorthAnotherRESTEndpoint } == [])
        #expect(answers.filter { $0.isWorthAnotherRESTEndpoint } == [])
    }

    @Test("ClientError describes itself as CODE: message")
    func description() {
        #expect(ClientError(code: .server(.callingSelf), message: "why").description == "ERR_CALLING_SELF: why")
        #expect(ClientError(SignalError(.callingSelf, "why")).code.serverCode == .callingSelf)
        #expect(ClientErrorCode.timeout.serverCode == nil)
    }
}
