/// `url` as logs and error messages show it: scheme, host, port and path,
/// without the userinfo, query or fragment, which often carry a credential
/// (a webhook receiver's `?token=…`). `https://u:p@h:8443/x?token=t` is
/// shown as `https://h:8443/x`; text that is not a URL comes back as it was.
func redactedURL(_ url: String) -> String {
    guard let schemeEnd = url.range(of: "://") else { return url }
    let rest = url[schemeEnd.upperBound...]
    let beforeQuery = rest.prefix { $0 != "?" && $0 != "#" }
    let authorityEnd = beforeQuery.firstIndex(of: "/") ?? beforeQuery.endIndex
    let authority = beforeQuery[..<authorityEnd]
    let host = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
    return String(url[..<schemeEnd.upperBound] + host + beforeQuery[authorityEnd...])
}
