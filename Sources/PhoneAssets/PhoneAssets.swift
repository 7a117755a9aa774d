/// The browser softphone (`web/`: plain HTML, CSS and ES modules), compiled
/// into the binary by SwiftPM's `embedInCode`, so that an installed `ringd`
/// serves it with nothing beside it on disk. A file added to `web/` is
/// served once it is listed in ``files``.
public enum PhoneAssets {
    /// One file of the page.
    public struct File: Sendable {
        public let body: [UInt8]
        /// The `Content-Type` it is served with.
        public let contentType: String
    }

    /// The page's files by name (the last path segment under `/phone/`).
    public static let files: [String: File] = [
        "index.html": File(body: PackageResources.index_html, contentType: html),
        "phone.css": File(body: PackageResources.phone_css, contentType: css),
        "main.js": File(body: PackageResources.main_js, contentType: javaScript),
        "media.js": File(body: PackageResources.media_js, contentType: javaScript),
        "slot.js": File(body: PackageResources.slot_js, contentType: javaScript),
        "ringtone.js": File(body: PackageResources.ringtone_js, contentType: javaScript),
        "ui.js": File(body: PackageResources.ui_js, contentType: javaScript),
        "view.js": File(body: PackageResources.view_js, contentType: javaScript),
        "storage.js": File(body: PackageResources.storage_js, contentType: javaScript),
    ]

    /// ringd-client.js (docs/WEB.md) and its types, by name (the last path
    /// segment under `/client/`): served to apps as well as to the page.
    public static let client: [String: File] = [
        "ringd-client.js": File(body: PackageResources.ringd_client_js, contentType: javaScript),
        "ringd-client.d.ts": File(body: PackageResources.ringd_client_d_ts, contentType: typeScript),
    ]

    private static let html = "text/html; charset=utf-8"
    private static let css = "text/css; charset=utf-8"
    private static let javaScript = "text/javascript; charset=utf-8"
    private static let typeScript = "application/typescript; charset=utf-8"
}
