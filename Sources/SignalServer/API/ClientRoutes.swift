import PhoneAssets
import SignalProtocol

/// The JavaScript client (docs/WEB.md): `GET /client/ringd-client.js` and
/// `GET /client/ringd-client.d.ts`, from the binary like the phone's files.
/// Served whether or not the phone page is on (`webrtc.phone`): apps load it
/// too. Any origin may fetch it (a module script is fetched with CORS), and
/// `no-cache` keeps a page's copy in step with the server it talks to.
enum ClientRoutes {
    static func add(to table: inout RouteTable) {
        table.add("GET", "/client/{file}") { _, parameters in
            guard let file = PhoneAssets.client[parameters["file"] ?? ""] else {
                return .respond(.error(.notFound, "no file \(parameters["file"] ?? "") in the client"))
            }
            let headers = HTTPHeaders([
                ("Content-Type", file.contentType),
                ("Cache-Control", "no-cache"),
                ("X-Content-Type-Options", "nosniff"),
                ("Access-Control-Allow-Origin", "*"),
            ])
            return .respond(HTTPResponse(status: .ok, headers: headers, body: file.body))
        }
    }
}
