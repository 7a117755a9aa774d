import PhoneAssets
import SignalProtocol

/// The browser softphone (docs/PHONE.md): `GET /phone/` and its files,
/// and `GET /` redirecting there. Every file is in the binary
/// (``PhoneAssets``), so serving one never touches the disk.
enum PhoneRoutes {
    static func add(to table: inout RouteTable) {
        let toThePhone = HTTPResponse(status: .found, headers: HTTPHeaders([("Location", "/phone/")]))
        table.add("GET", "/") { _, _ in .respond(toThePhone) }
        table.add("GET", "/phone") { _, _ in .respond(toThePhone) }
        table.add("GET", "/phone/") { _, _ in serve("index.html") }
        table.add("GET", "/phone/{file}") { _, parameters in serve(parameters["file"] ?? "") }
    }

    private static func serve(_ name: String) -> HTTPRoute {
        guard let file = PhoneAssets.files[name] else {
            return .respond(.error(.notFound, "no file \(name) in the phone"))
        }
        return .respond(HTTPResponse(status: .ok, headers: headers(file), body: file.body))
    }

    /// The page may talk to this server only (`'self'` covers its `ws:` and
    /// `wss:` URLs in CSP 3), load nothing from elsewhere, and not be
    /// framed; `no-cache` so that a new ringd's page is used at once.
    private static func headers(_ file: PhoneAssets.File) -> HTTPHeaders {
        HTTPHeaders([
            ("Content-Type", file.contentType),
            ("Cache-Control", "no-cache"),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            (
                "Content-Security-Policy",
                "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
                    + "media-src 'self' blob: mediastream:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
            ),
        ])
    }
}
