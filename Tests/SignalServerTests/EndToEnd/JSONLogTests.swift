import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// `log.format: json` from the ringd binary: every line parses on its own
/// (with Python's json as well as ringd's parser), carries time, level and
/// message, and REST requests get an access line without their key.
@Suite("EndToEnd: JSON logs", .blocking)
struct JSONLogTests {
    @Test func everyLineIsOneJSONObjectAndRequestsAreLogged() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let config = directory.file("config.json")
        try
            #"{"listen": {"port": 0}, "log": {"format": "json"}, "store": {"path": "\#(directory.file("ringd.sqlite"))"}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let binary = try RingdProcess.binary()
        let log = directory.file("ringd.log"), out = directory.file("ringd.out")
        let ringd = try ChildProcess(binary, ["--config", config], stdout: .file(out), stderr: .file(log))
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        #expect(waitUntil(timeout: 15) { read(out).contains("listening ws://") }, "\(read(log))")
        let port = try #require(
            read(out).split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        let calls = try SignalingIntegration.rest(port: port, "GET", "/v1/users/alice/calls?limit=1")
        #expect(calls.status == 200)
        #expect(
            try SignalingIntegration.rest(port: port, "GET", "/v1/users/alice/calls", apiKey: "wrong").status == 401)
        #expect(waitUntil(timeout: 10) { read(log).components(separatedBy: "\"message\":\"request\"").count == 3 })
        ringd.signal(SIGTERM)
        #expect(ringd.wait(timeout: 15) == .exited(0))

        let lines = read(log).split(separator: "\n").map(String.init)
        #expect(lines.count >= 4, "\(lines)")
        for line in lines {
            let object = try JSONValue.parse(line)
            #expect(
                object["time"]?.stringValue?.hasSuffix("Z") == true && object["level"]?.stringValue != nil
                    && object["message"]?.stringValue != nil, "\(line)")
        }
        let requests = try lines.map(JSONValue.parse).filter { $0["message"]?.stringValue == "request" }
        #expect(requests.map { $0["status"]?.stringValue } == ["200", "401"])
        #expect(requests.first?["path"]?.stringValue == "/v1/users/alice/calls", "the query is left out")
        #expect(!read(log).contains("ringd-dev-api-key") && !read(log).contains("wrong"), "never a key")
        let check = try ChildProcess(
            "python3", ["-c", "import json, sys\nfor line in open(sys.argv[1]): json.loads(line)", log],
            stdout: .null, stderr: .file(directory.file("python.err")))
        #expect(check.wait(timeout: 20) == .exited(0), "\(read(directory.file("python.err")))")
    }
}

/// Repeated warnings: a burst per kind and window, then a count.
struct LogThrottleTests {
    @Test func aBurstIsWrittenThenCountedAndReportedWithTheNextWindow() {
        let throttle = LogThrottle()
        for _ in 0 ..< LogThrottle.burst { #expect(throttle.admit("refused", now: 0) == 0) }
        for _ in 0 ..< 7 { #expect(throttle.admit("refused", now: 1) == nil) }
        #expect(throttle.admit("other", now: 1) == 0, "kinds are counted apart")
        #expect(throttle.admit("refused", now: LogThrottle.window) == 7, "the next line says how many were suppressed")
        #expect(throttle.admit("refused", now: LogThrottle.window + 1) == 0)
    }

    @Test func textAndJSONLinesCarryTheFields() throws {
        let text = String(
            decoding: Log.textLine(.info, "request", [("method", "GET"), ("status", "200")]), as: UTF8.self)
        #expect(text.hasSuffix(" info request method=GET status=200\n"))
        let json = try JSONValue.parse(
            Log.jsonLine(.warning, "quote \" and\nnewline", [("uid", "bob"), ("level", "x")]))
        #expect(json["level"] == .string("warning") && json["message"] == .string("quote \" and\nnewline"))
        #expect(json["uid"] == .string("bob"))
    }
}
