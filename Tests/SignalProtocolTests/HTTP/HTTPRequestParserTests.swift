import SignalProtocol
import TestSupport
import Testing

/// A request's observable parts, comparable across ways of feeding.
struct ParsedRequest: Equatable, CustomStringConvertible {
    var method: String
    var target: String
    var minorVersion: Int
    var headers: [String]
    var body: [UInt8]

    init(_ request: HTTPRequest) {
        method = request.method
        target = request.target
        minorVersion = request.minorVersion
        headers = request.headers.map { "\($0.name): \($0.value)" }
        body = request.body
    }

    var description: String { "\(method) \(target) 1.\(minorVersion) \(headers) body \(body.count)" }
}

/// What feeding a byte stream produced: the requests, then the error if any.
struct ParseOutcome: Equatable {
    var requests: [ParsedRequest] = []
    var errorStatus: Int?
}

/// Feeds `chunks` one after another, taking every request after each chunk.
func parse(_ chunks: [[UInt8]], maxHeaderBytes: Int = 8192, maxBodyBytes: Int = 1024) -> ParseOutcome {
    var parser = HTTPRequestParser(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    var outcome = ParseOutcome()
    for chunk in chunks {
        parser.append(contentsOf: chunk)
        do {
            while let request = try parser.next() { outcome.requests.append(ParsedRequest(request)) }
        } catch {
            outcome.errorStatus = error.status.code
            return outcome
        }
    }
    return outcome
}

func parseWhole(_ text: String, maxBodyBytes: Int = 1024) -> ParseOutcome {
    parse([Array(text.utf8)], maxBodyBytes: maxBodyBytes)
}

func parseByteByByte(_ text: String, maxBodyBytes: Int = 1024) -> ParseOutcome {
    parse(Array(text.utf8).map { [$0] }, maxBodyBytes: maxBodyBytes)
}

@Suite(.blocking) struct HTTPRequestParserTests {
    static let pipeline =
        "\r\nGET /a?x=1&y=%20z HTTP/1.1\r\nHost: example\r\nX-Multi: one\r\nx-multi:  two \r\n\r\n"
        + "POST /b HTTP/1.1\r\nHost: example\r\nContent-Length: 5\r\n\r\nhello"
        + "GET /c HTTP/1.0\r\n\r\n"

    @Test func byteByByteEqualsWholeFeeding() {
        let whole = parseWhole(Self.pipeline)
        #expect(whole.errorStatus == nil)
        #expect(whole.requests.map(\.target) == ["/a?x=1&y=%20z", "/b", "/c"])
        #expect(whole.requests[0].headers == ["Host: example", "X-Multi: one", "x-multi: two"])
        #expect(whole.requests[1].body == Array("hello".utf8))
        #expect(whole.requests[2].minorVersion == 0)
        #expect(parseByteByByte(Self.pipeline) == whole)
        // And for every two-piece split.
        let bytes = Array(Self.pipeline.utf8)
        for cut in 1 ..< bytes.count {
            #expect(parse([Array(bytes[..<cut]), Array(bytes[cut...])]) == whole, "split at \(cut)")
        }
    }

    @Test func requestAccessors() throws {
        var parser = HTTPRequestParser(maxBodyBytes: 0)
        parser.append(
            contentsOf: Array("GET /p/q?a=1&b=x+y%21&c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n".utf8))
        let request = try #require(try parser.next())
        #expect(request.path == "/p/q")
        #expect(request.query.map { "\($0.name)=\($0.value)" } == ["a=1", "b=x y!", "c="])
        #expect(request.keepAlive == false)
        #expect(request.headers["host"] == "h")
    }

    @Test func headerLimitFiresAsSoonAs8193BytesAreBufferedWithoutAnEnd() throws {
        let start = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: "
        let unterminated = Array((start + String(repeating: "p", count: 8193 - start.utf8.count)).utf8)
        #expect(unterminated.count == 8193)
        var parser = HTTPRequestParser(maxBodyBytes: 0)
        parser.append(contentsOf: unterminated)
        #expect {
            _ = try parser.next()
        } throws: { error in
            (error as? HTTPParseError)?.status.code == 431
        }
        // Fed byte by byte, it fails by the 8193rd byte at the latest.
        var outcome = parse(unterminated.map { [$0] })
        #expect(outcome.errorStatus == 431)
        // The same bytes with a terminator would make a head over the limit,
        // so no split may let them through.
        outcome = parse([Array(unterminated.prefix(4000)), Array(unterminated.dropFirst(4000)) + [13, 10, 13, 10]])
        #expect(outcome.errorStatus == 431)
    }

    @Test func completeHeadOverTheLimitIs431() {
        let head = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + String(repeating: "p", count: 9000) + "\r\n\r\n"
        #expect(parseWhole(head).errorStatus == 431)
        #expect(parseByteByByte(head).errorStatus == 431)
    }

    /// A head whose request line and fields take exactly the limit is
    /// accepted whatever the split: the empty line ending it is not part of
    /// the header block.
    @Test(arguments: ["\r\n", "\n"])
    func headOfExactlyTheLimitIsAcceptedForAnySplit(lineEnd: String) {
        let start = "GET / HTTP/1.1\(lineEnd)Host: a\(lineEnd)X-Pad: "
        let pad = String(repeating: "p", count: 8192 - start.utf8.count - lineEnd.utf8.count)
        let request = start + pad + lineEnd + lineEnd
        let whole = parseWhole(request)
        #expect(whole.errorStatus == nil)
        #expect(whole.requests.count == 1)
        #expect(parseByteByByte(request) == whole)
    }

    /// A byte that cannot be part of a method fails at once, without waiting
    /// for a line end: a TLS ClientHello on a plain port has none for a while.
    @Test func aTLSHandshakeIs400AtItsFirstByte() throws {
        // Random handshake bytes may hold an LF LF that would end a "head".
        var parser = HTTPRequestParser(maxBodyBytes: 1000)
        parser.append(contentsOf: [22, 3, 1, 2, 0, 10, 10, 7])
        let tls = #expect(throws: HTTPParseError.self) { try parser.next() }
        #expect(tls?.message.contains("TLS handshake") == true)
        var partialMethod = HTTPRequestParser(maxBodyBytes: 1000)
        partialMethod.append(contentsOf: Array("GE".utf8))
        #expect(try partialMethod.next() == nil)
        partialMethod.append(contentsOf: [0x01])
        let error = #expect(throws: HTTPParseError.self) { try partialMethod.next() }
        #expect(error?.status.code == 400)
    }

    @Test func tooLargeContentLengthIs413AsSoonAsTheHeadIsParsed() throws {
        var parser = HTTPRequestParser(maxBodyBytes: 1000)
        parser.append(contentsOf: Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n\r\n".utf8))
        #expect {
            _ = try parser.next()
        } throws: { error in
            (error as? HTTPParseError)?.status.code == 413
        }
        // After an error nothing more is parsed.
        parser.append(contentsOf: Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(try parser.next() == nil)
    }

    @Test func hugeContentLengthIs413() {
        let outcome = parseWhole("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n")
        #expect(outcome.errorStatus == 413)
    }

    @Test(arguments: [
        "Content-Length: 5\r\nContent-Length: 6\r\n",
        "Content-Length: 5, 6\r\n",
        "Content-Length: -5\r\n",
        "Content-Length: 5x\r\n",
        "Content-Length: \r\n",
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
    ])
    func invalidOrConflictingContentLengthIs400(fields: String) {
        #expect(parseWhole("POST / HTTP/1.1\r\nHost: a\r\n\(fields)\r\nhello").errorStatus == 400)
    }

    @Test func repeatedEqualContentLengthIsAccepted() {
        let outcome = parseWhole("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5, 5\r\n\r\nhello")
        #expect(outcome.errorStatus == nil)
        #expect(outcome.requests.first?.body == Array("hello".utf8))
    }

    @Test func transferEncodingIs501() {
        #expect(parseWhole("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n").errorStatus == 501)
    }

    @Test func obsoleteLineFoldingIs400() {
        #expect(parseWhole("GET / HTTP/1.1\r\nHost: a\r\nX-Long: one\r\n two\r\n\r\n").errorStatus == 400)
        #expect(parseWhole("GET / HTTP/1.1\r\nHost: a\r\nX-Long: one\r\n\ttwo\r\n\r\n").errorStatus == 400)
    }

    @Test(arguments: ["X A: b", "Host : a", "X@A: b", ": b", "X\u{7F}: b", "NoColon"])
    func badHeaderNameIs400(field: String) {
        #expect(parseWhole("GET / HTTP/1.1\r\nHost: a\r\n\(field)\r\n\r\n").errorStatus == 400)
    }

    @Test func controlCharacterInHeaderValueIs400() {
        #expect(parseWhole("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{1}c\r\n\r\n").errorStatus == 400)
    }

    @Test(arguments: [
        ("GARBAGE", 400), ("GET /", 400), ("GET  / HTTP/1.1", 400), ("G\"T / HTTP/1.1", 400),
        ("GET / HTTP/1.10", 400), ("GET / http/1.1", 400),
        ("GET / HTTP/2.0", 505), ("GET / HTTP/0.9", 505), ("GET / HTTP/1.2", 505), ("GET / HTTP/1.9", 505),
        ("GET ftp://a/x HTTP/1.1", 400), ("GET http://user@a/x HTTP/1.1", 400), ("GET http:///x HTTP/1.1", 400),
        ("GET http:/x HTTP/1.1", 400), ("GET a/b HTTP/1.1", 400), ("GET //a/b HTTP/2.0", 505),
    ])
    func badRequestLine(line: String, status: Int) {
        #expect(parseWhole("\(line)\r\nHost: a\r\n\r\n").errorStatus == status, "\(line)")
        #expect(parseByteByByte("\(line)\r\nHost: a\r\n\r\n").errorStatus == status, "\(line), byte by byte")
    }

    /// RFC 9112 §3.2.2: absolute-form targets are accepted and routed by
    /// their path and query; an empty path is "/". The scheme is matched
    /// without regard to case. Fed whole and byte by byte.
    @Test(arguments: [
        ("http://127.0.0.1:8080/healthz", "/healthz"),
        (
            "HTTPS://ringd.example/v1/users/a/calls?limit=2",
            "/v1/users/a/calls?limit=2"
        ),
        ("http://ringd.example", "/"), ("http://ringd.example?x=1", "/?x=1"), ("http://[::1]:80/m", "/m"),
    ])
    func absoluteFormTargetsAreAccepted(target: String, path: String) {
        let text = "GET \(target) HTTP/1.1\r\nHost: ringd.example\r\n\r\n"
        for outcome in [parseWhole(text), parseByteByByte(text)] {
            #expect(outcome.errorStatus == nil, "\(target)")
            #expect(outcome.requests.map(\.target) == [path], "\(target)")
        }
    }

    /// The Host header is still required of HTTP/1.1 (RFC 9112 §3.2), even
    /// when the target names the host; HTTP/1.0 needs none.
    @Test func anAbsoluteFormTargetDoesNotStandInForHost() {
        #expect(parseByteByByte("GET http://a/healthz HTTP/1.1\r\n\r\n").errorStatus == 400)
        #expect(parseByteByByte("GET http://a/healthz HTTP/1.0\r\n\r\n").requests.map(\.target) == ["/healthz"])
    }

    @Test func hostIsRequiredExactlyOnceForHTTP11() {
        #expect(parseWhole("GET / HTTP/1.1\r\n\r\n").errorStatus == 400)
        #expect(parseWhole("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n").errorStatus == 400)
        #expect(parseWhole("GET / HTTP/1.0\r\n\r\n").requests.count == 1)
    }

    @Test func leadingEmptyLinesAreIgnored() {
        let outcome = parseWhole(
            "\r\n\r\n\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET /y HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(outcome.errorStatus == nil)
        #expect(outcome.requests.map(\.target) == ["/x", "/y"])
        #expect(parseByteByByte("\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n").requests.map(\.target) == ["/x"])
    }

    @Test func bareLFLineEndingsAreAccepted() {
        let text = "GET /lf HTTP/1.1\nHost: a\nX-B: c\n\nPOST /p HTTP/1.1\nHost: a\nContent-Length: 2\n\nok"
        let outcome = parseWhole(text)
        #expect(outcome.errorStatus == nil)
        #expect(outcome.requests.map(\.target) == ["/lf", "/p"])
        #expect(outcome.requests.first?.headers == ["Host: a", "X-B: c"])
        #expect(outcome.requests.last?.body == Array("ok".utf8))
        #expect(parseByteByByte(text) == outcome)
    }

    @Test func takeBufferedBytesReturnsTheBytesAfterTheRequest() throws {
        let frame: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58, 0x0D, 0x0A]
        var parser = HTTPRequestParser(maxBodyBytes: 0)
        parser.append(contentsOf: Array("GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n".utf8) + frame)
        let request = try #require(try parser.next())
        #expect(request.target == "/ws")
        #expect(parser.hasPartialRequest)
        #expect(parser.takeBufferedBytes() == frame)
        #expect(!parser.hasPartialRequest)
        #expect(parser.takeBufferedBytes() == [])
    }

    /// A head announcing a body is a partial request even before any body
    /// byte arrives (the handshake timeout answers such a stall with 408).
    @Test func headAwaitingItsBodyIsAPartialRequest() throws {
        var parser = HTTPRequestParser(maxBodyBytes: 10)
        parser.append(contentsOf: Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n".utf8))
        #expect(try parser.next() == nil)
        #expect(parser.hasPartialRequest)
    }

    @Test func partialRequestIsReportedUntilComplete() throws {
        var parser = HTTPRequestParser(maxBodyBytes: 10)
        #expect(!parser.hasPartialRequest)
        parser.append(contentsOf: Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nab".utf8))
        #expect(try parser.next() == nil)
        #expect(parser.hasPartialRequest)
        parser.append(contentsOf: Array("c".utf8))
        #expect(try parser.next()?.body == Array("abc".utf8))
        #expect(!parser.hasPartialRequest)
    }
}
