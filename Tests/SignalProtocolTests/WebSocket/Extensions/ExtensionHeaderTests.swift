import SignalProtocol
import TestSupport
import Testing

@Suite("Sec-WebSocket-Extensions: parsing", .blocking)
struct ExtensionHeaderTests {
    typealias Parameter = WebSocketExtension.Parameter

    @Test func severalExtensionsAcrossFieldsKeepTheirOrderAndParameters() throws {
        let list = try WebSocketExtension.parseList([
            "permessage-deflate; client_max_window_bits, x-webkit-deflate-frame",
            "Permessage-Deflate ;Server_Max_Window_Bits=10 ; client_no_context_takeover",
        ])
        #expect(
            list == [
                WebSocketExtension("permessage-deflate", [Parameter("client_max_window_bits")]),
                WebSocketExtension("x-webkit-deflate-frame"),
                WebSocketExtension(
                    "permessage-deflate",
                    [
                        Parameter("server_max_window_bits", "10"),
                        Parameter("client_no_context_takeover"),
                    ]),
            ])
    }

    @Test func quotedValuesAreUnquotedAndEscapesResolved() throws {
        let list = try WebSocketExtension.parseList(["permessage-deflate; server_max_window_bits=\"1\\2\""])
        #expect(list.first?.parameters == [Parameter("server_max_window_bits", "12")])
    }

    @Test func emptyElementsAndWhitespaceAreSkipped() throws {
        #expect(try WebSocketExtension.parseList([" , ,\tfoo ,", ""]) == [WebSocketExtension("foo")])
        #expect(try WebSocketExtension.parseList([]).isEmpty)
    }

    @Test(
        "grammar violations fail with malformed_header",
        arguments: [
            "permessage-deflate;", "; foo", "permessage-deflate; =1", "permessage-deflate; a=", "a b",
            "permessage-deflate; x=\"unterminated", "permessage-deflate; x=\"two words\"", "permessage-deflate; x=\"\"",
            "foo=1", "foo; a=1 2", "f(o)o",
        ])
    func malformedHeaders(_ value: String) {
        #expect(extensionErrorCode { try WebSocketExtension.parseList([value]) } == .malformedHeader)
    }

    @Test func headerValueWritesParametersInOrder() {
        let element = WebSocketExtension("permessage-deflate", [Parameter("a"), Parameter("b", "9")])
        #expect(element.headerValue == "permessage-deflate; a; b=9")
    }
}
