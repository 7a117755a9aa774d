import Testing

@testable import SignalClient

/// What a refused request says of the server's answer: ringd's JSON error,
/// or one short line when the server is not ringd.
struct HTTPErrorMessageTests {
    @Test func ringdsJSONErrorGivesItsCodeAndMessage() {
        let (code, message) = HTTPResponseBuffer.errorMessage(
            in: Array(#"{"error":{"code":"ERR_NOT_FOUND","message":"no resource at /nope"}}"#.utf8))
        #expect(code == "ERR_NOT_FOUND" && message == "no resource at /nope")
    }

    @Test func anHTMLPageIsOneLineThatAsksWhetherThisIsRingd() {
        let page =
            "<!DOCTYPE html>\n<html>\n<head><title>404 Not Found</title></head>\n<body>\n<h1>Not Found</h1>\n</body>\n</html>\n"
        let (code, message) = HTTPResponseBuffer.errorMessage(in: Array(page.utf8))
        #expect(code == nil)
        #expect(message == "an HTML page, not ringd's JSON (is this ringd?)")
    }

    @Test func otherTextIsOneShortLine() {
        let (_, message) = HTTPResponseBuffer.errorMessage(
            in: Array(("nope\n\n" + String(repeating: "word ", count: 100)).utf8))
        #expect(!message.contains("\n"))
        #expect(message.hasPrefix("nope word word") && message.count <= 121)
    }
}
