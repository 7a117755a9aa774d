import Testing

@testable import SignalProtocol

/// Each error status answers with a stable code of its own (docs/PROTOCOL.md, "HTTP").
struct HTTPStatusTests {
    @Test func everyErrorStatusHasItsOwnCode() {
        let statuses: [HTTPStatus] = [
            .badRequest, .unauthorized, .notFound, .methodNotAllowed, .requestTimeout, .conflict, .contentTooLarge,
            .tooManyRequests,
            .upgradeRequired, .headersTooLarge, .internalServerError, .notImplemented, .serviceUnavailable,
            .versionNotSupported,
        ]
        let codes = statuses.map(\.errorCode)
        #expect(Set(codes).count == codes.count, "\(codes)")
        #expect(HTTPStatus.conflict.errorCode == "ERR_CONFLICT")
        #expect(HTTPStatus.internalServerError.errorCode == "ERR_INTERNAL")
    }
}
