import Foundation
import SignalProtocol
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One answer of ``MockPushServer``'s script, given to one request for a
/// device token in place of the usual success: for APNs a status and its
/// `reason` (410 `Unregistered`, 403 `ExpiredProviderToken`, 429
/// `TooManyRequests`…), for FCM a status and its `fcmError` (404
/// `UNREGISTERED`, 400 `INVALID_ARGUMENT`, 429 `QUOTA_EXCEEDED`, 503
/// `UNAVAILABLE`); either may carry a `retry-after` header. A status of
/// 200 is the usual success.
struct MockPushAnswer: Sendable, Equatable {
    var status: Int
    var reason: String?
    var fcmError: String?
    var retryAfter: Int?

    init(status: Int, reason: String? = nil, fcmError: String? = nil, retryAfter: Int? = nil) {
        (self.status, self.reason, self.fcmError, self.retryAfter) = (status, reason, fcmError, retryAfter)
    }

    /// As the script file spells it.
    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("status", .integer(Int64(status)))]
        if let reason { members.append(("reason", .string(reason))) }
        if let fcmError { members.append(("fcmError", .string(fcmError))) }
        if let retryAfter { members.append(("retryAfter", .integer(Int64(retryAfter)))) }
        return .object(members)
    }
}

/// One request as ``MockPushServer`` logged it (Tests/Push/mock_push.py
/// writes a JSON line for each, before it answers).
struct MockPushRequest: Sendable {
    enum Kind: String, Sendable {
        case apns, fcm, oauth, other
    }

    var kind: Kind
    /// Unix milliseconds, when the request's last byte arrived.
    var receivedAt: Double
    var method: String
    var path: String
    /// "2" or "1.1".
    var httpVersion: String
    /// The HTTP/2 stream; nil over HTTP/1.1.
    var streamId: Int?
    /// The TLS connection, counted from 1 in the order they were accepted.
    var connectionId: Int
    /// Lower-case names; repeated fields joined by ", "; HTTP/2's
    /// pseudo-headers (`:authority`, `:path`…) included.
    var headers: [String: String]
    /// The body parsed as JSON, when it was JSON.
    var body: JSONValue?
    /// The body as text: a form body (OAuth), or one that was not JSON.
    var rawBody: String?
    var bodyBytes: Int
    /// The APNs device token (from the path) or FCM registration token
    /// (`message.token`).
    var token: String?
    /// The JWT's header and claims (APNs provider token, OAuth assertion),
    /// when one could be decoded.
    var jwtHeader: JSONValue?
    var jwtClaims: JSONValue?
    /// The status the mock answered.
    var status: Int
    /// Every check the request failed; empty when it was as it must be.
    var violations: [String]

    init(_ line: JSONValue) throws(MockPushError) {
        func field<T>(_ name: String, _ read: (JSONValue) -> T?) throws(MockPushError) -> T {
            guard let value = line[name], let typed = read(value) else {
                throw MockPushError("log line has no valid \(name): \(line.serialized)")
            }
            return typed
        }
        func optional<T>(_ name: String, _ read: (JSONValue) -> T?) -> T? {
            guard let value = line[name], value != .null else { return nil }
            return read(value)
        }
        let kind = try field("kind") { $0.stringValue.flatMap(Kind.init(rawValue:)) }
        let receivedAt = try field("receivedAt") { value -> Double? in
            switch value {
            case .double(let number): number
            case .integer(let number): Double(number)
            default: nil
            }
        }
        let headers = try field("headers") { value -> [String: String]? in
            value.objectMembers.map { members in
                Dictionary(
                    members.compactMap { member in member.value.stringValue.map { (member.key, $0) } },
                    uniquingKeysWith: { first, _ in first })
            }
        }
        let jwt = optional("jwt") { $0 }
        self.kind = kind
        self.receivedAt = receivedAt
        method = try field("method") { $0.stringValue }
        path = try field("path") { $0.stringValue }
        httpVersion = try field("httpVersion") { $0.stringValue }
        streamId = optional("streamId") { $0.integerValue.map { Int($0) } }
        connectionId = try field("connectionId") { $0.integerValue.map { Int($0) } }
        self.headers = headers
        body = optional("body") { $0 }
        rawBody = optional("rawBody") { $0.stringValue }
        bodyBytes = try field("bodyBytes") { $0.integerValue.map { Int($0) } }
        token = optional("token") { $0.stringValue }
        jwtHeader = jwt?["header"]
        jwtClaims = jwt?["claims"]
        status = try field("status") { $0.integerValue.map { Int($0) } }
        violations = try field("violations") { value -> [String]? in
            guard case .array(let items) = value else { return nil }
            return items.compactMap(\.stringValue)
        }
    }
}

/// Why ``MockPushServer`` (or ``MockPushKeys``) failed.
struct MockPushError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Tests/Push/mock_push.py on a free port of 127.0.0.1: APNs
/// (`/3/device/<token>`), Google's OAuth token endpoint (`/token`) and FCM
/// v1 (`/v1/projects/<project>/messages:send`) over TLS with the given
/// certificate, HTTP/2 by ALPN. It checks every request and logs it with
/// the checks it failed (``MockPushRequest/violations``). Runs in the
/// virtual environment `make venv` makes; its log, script and keys are in
/// a temporary directory of its own. Stopped (SIGTERM) and the directory
/// removed when released, or by ``stop()``.
final class MockPushServer {
    static let python = PythonCheck.python
    static let script = Repository.root() + "/Tests/Push/mock_push.py"

    let directory: TemporaryDirectory
    let port: Int
    /// `https://127.0.0.1:<port>`; the OAuth endpoint is `baseURL + "/token"`.
    var baseURL: String { "https://127.0.0.1:\(port)" }
    var logPath: String { directory.file("requests.jsonl") }
    /// What the mock wrote to stderr (Python's tracebacks, TLS failures).
    var standardError: String { (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? "" }
    private let process: ChildProcess

    /// Starts the mock and waits (up to 10 s) until it listens. `apnsKeyId`
    /// and `apnsTeamId` are the provider token's `kid` and `iss`;
    /// `fcmClientEmail` the assertion's `iss`; `script` maps a device token
    /// (or "*", every other token) to the answers its successive requests
    /// get before the usual success; `delayMs` delays every answer;
    /// `accessTokenLifetime` is the seconds an OAuth access token lasts.
    init(
        certificate: CertificateFiles, apnsPublicKey: String, apnsKeyId: String, apnsTeamId: String,
        fcmPublicKey: String, fcmClientEmail: String, fcmProject: String,
        script: [String: [MockPushAnswer]]? = nil, delayMs: Int? = nil, accessTokenLifetime: Int? = nil
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw MockPushError(
                "\(Self.python) is missing: run `make venv` (or `make test`, which runs it) "
                    + "to install h2 and cryptography for the mock push server")
        }
        let directory = try TemporaryDirectory(prefix: "ringd-push")
        var arguments = [
            "-I", Self.script,
            "--cert", certificate.certificatePath, "--key", certificate.privateKeyPath,
            "--apns-public-key", directory.file("apns-public.pem"),
            "--apns-key-id", apnsKeyId, "--apns-team-id", apnsTeamId,
            "--fcm-public-key", directory.file("fcm-public.pem"),
            "--fcm-client-email", fcmClientEmail, "--fcm-project", fcmProject,
            "--log", directory.file("requests.jsonl"),
        ]
        let process: ChildProcess
        do {
            try apnsPublicKey.write(toFile: directory.file("apns-public.pem"), atomically: true, encoding: .utf8)
            try fcmPublicKey.write(toFile: directory.file("fcm-public.pem"), atomically: true, encoding: .utf8)
            if let script {
                let json = JSONValue.object(
                    script.sorted { $0.key < $1.key }.map { token, answers in
                        (token, .array(answers.map(\.json)))
                    })
                try json.serialized.write(toFile: directory.file("script.json"), atomically: true, encoding: .utf8)
                arguments += ["--script", directory.file("script.json")]
            }
            if let delayMs { arguments += ["--delay-ms", String(delayMs)] }
            if let accessTokenLifetime { arguments += ["--access-token-lifetime", String(accessTokenLifetime)] }
            process = try ChildProcess(
                Self.python, arguments, stdout: .file(directory.file("stdout")),
                stderr: .file(directory.file("stderr")))
        } catch {
            directory.remove()
            throw error
        }
        // The mock prints `listening <port>` once it has bound the port.
        var port: Int?
        waitUntil(timeout: 10) {
            let output = (try? String(contentsOfFile: directory.file("stdout"), encoding: .utf8)) ?? ""
            port =
                output.split(separator: "\n").lazy.compactMap { line in
                    line.hasPrefix("listening ") ? Int(line.dropFirst("listening ".count)) : nil
                }.first
            return port != nil || !process.isRunning
        }
        guard let port else {
            process.kill()
            let errors = (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? ""
            directory.remove()
            throw MockPushError(
                "mock_push.py did not start (\(process.termination.map { "\($0)" } ?? "no answer in 10 s")): \(errors)")
        }
        (self.directory, self.process, self.port) = (directory, process, port)
    }

    /// Every request so far, in the order they were answered. Only whole
    /// lines are read: one being written is left for the next call.
    var requests: [MockPushRequest] {
        get throws {
            guard let data = FileManager.default.contents(atPath: logPath) else { return [] }
            let bytes = [UInt8](data)
            guard let end = bytes.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
            return try bytes[..<end].split(separator: UInt8(ascii: "\n")).map { line in
                try MockPushRequest(JSONValue.parse(line))
            }
        }
    }

    /// The requests of `kind` (of any kind when nil) once there are at least
    /// `count` of them; throws after `timeout` seconds with fewer, or when
    /// the mock has exited.
    @discardableResult
    func waitForRequests(
        count: Int, kind: MockPushRequest.Kind? = nil, timeout: Double = 10
    ) throws -> [MockPushRequest] {
        var matching: [MockPushRequest] = []
        var failure: (any Error)?
        let arrived = waitUntil(timeout: timeout) {
            do {
                matching = try requests.filter { kind == nil || $0.kind == kind }
            } catch {
                failure = error
                return true
            }
            return matching.count >= count || !process.isRunning
        }
        if let failure { throw failure }
        guard arrived, matching.count >= count else {
            let state = process.isRunning ? "" : " (the mock exited: \(standardError))"
            throw MockPushError(
                "\(matching.count) of \(count) \(kind?.rawValue ?? "") requests came in \(timeout) s\(state)")
        }
        return matching
    }

    /// Stops the mock (SIGTERM, SIGKILL if it has not exited within 5 s) and
    /// reaps it; returns how it ended. Idempotent.
    @discardableResult
    func stop() -> ChildProcess.Termination? {
        if process.isRunning {
            process.signal(SIGTERM)
            if process.wait(timeout: 5) == nil { process.kill() }
        }
        return process.termination
    }

    deinit {
        stop()
        directory.remove()
    }
}

/// Keys for the mock and for the tests that sign as ringd would, made with
/// the `openssl` CLI in a temporary directory (removed by ``remove()``): a
/// P-256 key as APNs hands them out (PKCS #8 PEM, an `AuthKey_<kid>.p8`)
/// and a 2048-bit RSA key as in a Google service account's JSON (PKCS #8
/// PEM), each with its SubjectPublicKeyInfo PEM for the mock.
struct MockPushKeys {
    let directory: TemporaryDirectory
    var apnsPrivateKeyPath: String { directory.file("apns.p8") }
    var fcmPrivateKeyPath: String { directory.file("fcm-key.pem") }
    let apnsPrivateKeyPEM: String
    let apnsPublicKeyPEM: String
    let fcmPrivateKeyPEM: String
    let fcmPublicKeyPEM: String

    init() throws {
        let directory = try TemporaryDirectory(prefix: "ringd-push-keys")
        do {
            let apns = directory.file("apns.p8"), fcm = directory.file("fcm-key.pem")
            try Self.openssl(
                ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", apns], in: directory)
            try Self.openssl(
                ["pkey", "-in", apns, "-pubout", "-out", directory.file("apns-public.pem")], in: directory)
            try Self.openssl(
                ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", fcm], in: directory)
            try Self.openssl(["pkey", "-in", fcm, "-pubout", "-out", directory.file("fcm-public.pem")], in: directory)
            func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }
            apnsPrivateKeyPEM = try read(apns)
            apnsPublicKeyPEM = try read(directory.file("apns-public.pem"))
            fcmPrivateKeyPEM = try read(fcm)
            fcmPublicKeyPEM = try read(directory.file("fcm-public.pem"))
        } catch {
            directory.remove()
            throw error
        }
        self.directory = directory
    }

    /// Runs `openssl` with `arguments` and waits (up to 60 s) for it to
    /// succeed; its stderr goes to a file in `directory`, quoted on failure.
    static func openssl(_ arguments: [String], in directory: TemporaryDirectory) throws {
        let errors = directory.file("openssl.stderr")
        try? FileManager.default.removeItem(atPath: errors)
        let child = try ChildProcess("openssl", arguments, stderr: .file(errors))
        let termination = child.wait(timeout: 60)
        guard termination == .exited(0) else {
            child.kill()
            let message = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw MockPushError(
                "openssl \(arguments.joined(separator: " ")): \(termination.map { "\($0)" } ?? "timed out"): \(message)"
            )
        }
    }

    func remove() { directory.remove() }
}
