import PhoneAssets
import SignalProtocol

/// The published contract, no key needed: `GET /v1/openapi.yaml` (every
/// HTTP route) and `GET /v1/asyncapi.yaml` (the frames of `/v1/ws`), the
/// bytes of docs/ as built into the binary (``ContractDocuments``).
enum ContractRoutes {
    static func add(to table: inout RouteTable) {
        let headers = HTTPHeaders([("Content-Type", "application/yaml"), ("X-Content-Type-Options", "nosniff")])
        let openAPI = HTTPResponse(status: .ok, headers: headers, body: ContractDocuments.openAPI)
        let asyncAPI = HTTPResponse(status: .ok, headers: headers, body: ContractDocuments.asyncAPI)
        table.add("GET", "/v1/openapi.yaml") { _, _ in .respond(openAPI) }
        table.add("GET", "/v1/asyncapi.yaml") { _, _ in .respond(asyncAPI) }
    }
}
