/// The published contract, compiled into the binary like the phone's files:
/// docs/openapi.yaml (the HTTP routes) and docs/asyncapi.yaml (the ringing
/// protocol's frames). `web/openapi.yaml` and `web/asyncapi.yaml` are
/// symbolic links to those two files, so the documents have one source and
/// `embedInCode` picks them up with the page; ``PhoneAssets/files`` does
/// not list them, so `/phone/` does not serve them.
public enum ContractDocuments {
    /// docs/openapi.yaml: OpenAPI 3.1.
    public static let openAPI: [UInt8] = PackageResources.openapi_yaml
    /// docs/asyncapi.yaml: AsyncAPI 3.0.
    public static let asyncAPI: [UInt8] = PackageResources.asyncapi_yaml
}
