import Foundation
import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// The published contract is served without a key, byte for byte the
    /// documents in docs/ (compiled in through the links in
    /// Sources/PhoneAssets/web/), and not as a file of the phone.
    @Suite("SignalingIntegration: the contract documents", .blocking)
    struct ContractDocumentTests {
        @Test(
            "GET /v1/openapi.yaml and /v1/asyncapi.yaml answer the bytes of docs/",
            arguments: ["openapi.yaml", "asyncapi.yaml"])
        func servesTheDocuments(_ name: String) throws {
            let document = try Data(contentsOf: URL(fileURLWithPath: Repository.root() + "/docs/" + name))
            let h = try Harness()
            defer { h.finish() }
            let answer = try h.rest("GET", "/v1/" + name, apiKey: nil)
            #expect(answer.status == 200)
            #expect(answer.response.header("Content-Type") == "application/yaml")
            #expect(answer.response.body == [UInt8](document), "/v1/\(name) is not docs/\(name)")
            #expect(try h.rest("GET", "/phone/" + name, apiKey: nil).status == 404)
            #expect(try h.rest("POST", "/v1/" + name, body: "{}", apiKey: nil).status == 405)
        }
    }
}
