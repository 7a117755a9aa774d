import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// A ringd with the test API on, and requests to it with the test key.
final class TestAPIRig {
    static let key = "test-key-0123456789abcdef"
    let harness: SignalingIntegration.Harness
    var port: Int { harness.port }

    init(_ adjust: @escaping (inout ServerConfig) -> Void = { _ in }) throws {
        harness = try SignalingIntegration.Harness { config in
            config.testing.enabled = true
            config.testing.key = TestAPIRig.key
            adjust(&config)
        }
    }

    func finish() { harness.finish() }

    /// A request to the test API; fails the test unless it answers `expect`.
    @discardableResult
    func call(
        _ method: String, _ path: String, _ body: String? = nil, expect status: Int = 200,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> SignalingIntegration.RestResponse {
        let response = try harness.rest(method, path, body: body, apiKey: nil, headers: ["X-Test-Key: \(Self.key)"])
        #expect(response.status == status, "\(method) \(path): \(response)", sourceLocation: sourceLocation)
        return response
    }

    func manualClock() throws { try call("POST", "/v1/test/clock", #"{"mode":"manual"}"#) }

    /// Advances the manual clock; returns how many timers fired.
    @discardableResult
    func advance(_ ms: Int64) throws -> Int64 {
        try call("POST", "/v1/test/clock/advance", #"{"ms":\#(ms)}"#).json?["fired"]?.integerValue ?? -1
    }

    func device(_ uid: String, _ deviceId: String) throws -> SignalingIntegration.Device {
        try harness.device(uid, deviceId)
    }

    /// The transitions kept for `sessionId`.
    func transitions(sessionId: String) throws -> [JSONValue] {
        guard
            case .array(let records)? = try call("GET", "/v1/test/transitions?sessionId=\(sessionId)").json?[
                "transitions"]
        else { return [] }
        return records
    }
}

extension JSONValue {
    /// The element at `index` of an array.
    subscript(_ index: Int) -> JSONValue? {
        guard case .array(let values) = self, values.indices.contains(index) else { return nil }
        return values[index]
    }
}
