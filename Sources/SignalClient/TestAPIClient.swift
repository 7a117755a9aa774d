import SignalCrypto
import SignalProtocol

/// ringd's test API (`testing.enabled`, docs/TEST-API.md), for the
/// integration tests of an app that uses ringd as its backend: the manual
/// clock, faults, reset and the recorded transitions. Each call is one
/// HTTP exchange with the key in `X-Test-Key`; a refusal throws
/// ``ClientErrorCode/http`` with the server's message.
public struct TestAPIClient: Sendable {
    public let endpoint: ServerEndpoint
    /// The server's `testing.key`.
    public let key: String
    /// Seconds the connect and, separately, the whole exchange may take.
    public var timeout: Double = 30
    public var tlsVerification = TLSVerification.systemRoots

    public init(endpoint: ServerEndpoint, key: String) {
        self.endpoint = endpoint
        self.key = key
    }

    /// Freezes the server's clock: ring timeouts and grace periods wait for ``advanceClock(milliseconds:)``.
    public func useManualClock() async throws(ClientError) {
        _ = try await exchange("POST", "/v1/test/clock", .object([("mode", .string("manual"))]))
    }

    /// Lets the server's clock run again from where it stands.
    public func useRealClock() async throws(ClientError) {
        _ = try await exchange("POST", "/v1/test/clock", .object([("mode", .string("real"))]))
    }

    /// Moves the manual clock forward; returns once every timer that fell
    /// due has fired and its frames are written to the devices, with the
    /// number of timers fired.
    @discardableResult
    public func advanceClock(milliseconds: Int64) async throws(ClientError) -> Int {
        let answer = try await exchange("POST", "/v1/test/clock/advance", .object([("ms", .integer(milliseconds))]))
        return Int(answer["fired"]?.integerValue ?? 0)
    }

    /// Drops the device's connection with a TCP reset.
    public func drop(uid: String, deviceId: String) async throws(ClientError) {
        _ = try await exchange("POST", devicePath(uid, deviceId, "drop"), nil, expecting: 204)
    }

    /// Holds the frames the server sends the device, for `milliseconds` or until ``release(uid:deviceId:)``.
    public func hold(uid: String, deviceId: String, milliseconds: Int64? = nil) async throws(ClientError) {
        _ = try await exchange(
            "POST", devicePath(uid, deviceId, "hold"),
            milliseconds.map { .object([("ms", .integer($0))]) }, expecting: 204)
    }

    /// Sends what was held for the device.
    public func release(uid: String, deviceId: String) async throws(ClientError) {
        _ = try await exchange("POST", devicePath(uid, deviceId, "release"), nil, expecting: 204)
    }

    /// Makes the next `commits` store transactions fail.
    public func failStoreCommits(_ commits: Int) async throws(ClientError) {
        _ = try await exchange("POST", "/v1/test/store/fail", .object([("commits", .integer(Int64(commits)))]))
    }

    /// A crash and a start from the store, without the process; returns the calls restored and ended.
    @discardableResult
    public func crash() async throws(ClientError) -> (restored: Int, ended: Int) {
        let answer = try await exchange("POST", "/v1/test/crash", nil)
        return (Int(answer["restored"]?.integerValue ?? 0), Int(answer["ended"]?.integerValue ?? 0))
    }

    /// Back to a new server: devices closed with 4010, the store emptied, the real clock.
    public func reset() async throws(ClientError) {
        _ = try await exchange("POST", "/v1/test/reset", nil, expecting: 204)
    }

    /// The transitions kept that touch `sessionId` and `uid` (each when given), oldest first.
    public func transitions(sessionId: String? = nil, uid: String? = nil) async throws(ClientError) -> [JSONValue] {
        var query: [String] = []
        if let sessionId { query.append("sessionId=" + RestClient.pathSegment(sessionId)) }
        if let uid { query.append("uid=" + RestClient.pathSegment(uid)) }
        let path = "/v1/test/transitions" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        guard case .array(let records)? = try await exchange("GET", path, nil)["transitions"] else {
            throw .protocolViolation("the transitions response lacks transitions")
        }
        return records
    }

    private func devicePath(_ uid: String, _ deviceId: String, _ fault: String) -> String {
        "/v1/test/devices/\(RestClient.pathSegment(uid))/\(RestClient.pathSegment(deviceId))/\(fault)"
    }

    private func exchange(
        _ method: String, _ path: String, _ body: JSONValue?,
        expecting status: Int = 200
    ) async throws(ClientError) -> JSONValue {
        try await HTTPExchange.json(
            method, path, body: body, headers: [("X-Test-Key", key)], to: endpoint,
            verification: tlsVerification, timeout: timeout, expecting: status)
    }
}
