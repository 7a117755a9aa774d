import Testing

@testable import SignalServer

/// What logs show of a URL: no userinfo, query or fragment.
struct RedactedURLTests {
    @Test(arguments: [
        ("https://hooks.example/in?token=s3cret", "https://hooks.example/in"),
        ("https://user:pa55@hooks.example:8443/a/b?x=1#frag", "https://hooks.example:8443/a/b"),
        ("http://u@127.0.0.1:9/hook", "http://127.0.0.1:9/hook"),
        ("https://hooks.example", "https://hooks.example"),
        ("https://hooks.example?key=k", "https://hooks.example"),
        ("http://[::1]:8080/p?q", "http://[::1]:8080/p"),
        ("https://a@b@hooks.example/", "https://hooks.example/"),
        ("not a url?token=x", "not a url?token=x"),
    ])
    func userinfoQueryAndFragmentAreLeftOut(url: String, shown: String) {
        #expect(redactedURL(url) == shown)
    }
}
