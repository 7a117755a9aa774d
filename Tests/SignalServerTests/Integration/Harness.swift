import SignalProtocol
import SignalServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// A real ringd (its own server and store) and the devices a test opened
    /// on it; ``finish()`` closes the devices, then stops the server.
    final class Harness {
        let server: TestServer
        let config: ServerConfig
        private var devices: [Device] = []

        var port: Int { server.port }

        /// A server with generous rate limits unless `adjust` says otherwise.
        init(_ adjust: (inout ServerConfig) -> Void = { _ in }) throws {
            config = testConfig { config in
                config.requestsPerSecond = 10_000
                config.requestBurst = 10_000
                adjust(&config)
            }
            server = try TestServer(ringd: config)
        }

        /// An authenticated device (dev key).
        func device(_ uid: String, _ deviceId: String?) throws -> Device {
            track(try Device.open(port: port, uid: uid, deviceId: deviceId))
        }

        /// A connected, unauthenticated device.
        func connect(query: String = "", headers: [String] = []) throws -> Device {
            track(try Device.connect(port: port, query: query, headers: headers))
        }

        @discardableResult
        func track(_ device: Device) -> Device {
            devices.append(device)
            return device
        }

        /// Closes every device, then stops the server (bounded).
        func finish() {
            for device in devices { device.close() }
            devices = []
            server.stop(timeout: 10)
        }

        /// A REST request to this server.
        func rest(
            _ method: String, _ path: String, body: String? = nil,
            apiKey: String? = SignalingIntegration.apiKey, headers: [String] = []
        ) throws -> RestResponse {
            try SignalingIntegration.rest(port: port, method, path, body: body, apiKey: apiKey, headers: headers)
        }
    }

    /// An HTTP response with its body parsed when it is JSON.
    struct RestResponse: CustomStringConvertible {
        let status: Int
        let response: TestHTTPResponse
        var json: JSONValue? { try? jsonBody(response) }
        var errorCode: String? { json?["error"]?["code"]?.stringValue }
        var errorMessage: String { json?["error"]?["message"]?.stringValue ?? "" }
        var description: String { "\(status) \(response.bodyText)" }
    }

    /// One REST request on a fresh connection (`Connection: close`), with extra header lines.
    static func rest(
        port: Int, _ method: String, _ path: String, body: String? = nil,
        apiKey: String? = SignalingIntegration.apiKey, headers: [String] = [], source: String? = nil
    ) throws -> RestResponse {
        let socket = try TestSocket(port: port, source: source)
        defer { socket.close() }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
        if let apiKey { head += "X-Api-Key: \(apiKey)\r\n" }
        for line in headers { head += line + "\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        try socket.send(head + "\r\n" + (body ?? ""))
        let response = try socket.readResponse()
        return RestResponse(status: response.status, response: response)
    }

    /// Mints a token for `uid` through the REST API.
    static func mintToken(port: Int, uid: String, ttlSeconds: Int? = nil) throws -> (token: String, expiresAt: Int64) {
        let response = try rest(
            port: port, "POST", "/v1/users/\(uid)/tokens",
            body: ttlSeconds.map { #"{"ttlSeconds":\#($0)}"# })
        guard response.status == 201, let token = response.json?["authToken"]?.stringValue,
            let expiresAt = response.json?["expiresAt"]?.integerValue
        else {
            throw ClientError("minting a token for \(uid): \(response)")
        }
        return (token, expiresAt)
    }

    /// The entries of a `getCallLogs`/REST page.
    static func logEntries(_ page: JSONValue?) -> [JSONValue] {
        guard case .array(let logs)? = page?["logs"] else { return [] }
        return logs
    }

    /// The session ids of a `getCallLogs`/REST page.
    static func sessionIds(_ page: JSONValue?) -> [String] {
        guard case .array(let logs)? = page?["logs"] else { return [] }
        return logs.compactMap { $0["sessionId"]?.stringValue }
    }
}

extension SignalingIntegration {
    /// Each device got exactly one call event since its last drain, with
    /// `status` and `sessionId` (checked with a barrier request, no sleeping).
    @discardableResult
    static func expectOne(
        _ devices: [Device], _ status: CallStatus, _ sessionId: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [Snapshot] {
        var seen: [Snapshot] = []
        for device in devices {
            let events = try device.drainEvents()
            #expect(events.map(\.status) == [status], "\(device) got \(events)", sourceLocation: sourceLocation)
            #expect(
                events.allSatisfy { $0.sessionId == sessionId }, "\(device) got \(events)",
                sourceLocation: sourceLocation)
            seen += events
        }
        return seen
    }

    /// No device got a call event since its last drain.
    static func expectNone(_ devices: [Device], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for device in devices {
            let events = try device.drainEvents()
            #expect(events.isEmpty, "\(device) got \(events)", sourceLocation: sourceLocation)
        }
    }
}
