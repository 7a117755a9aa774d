import SignalProtocol
import TestSupport
import Testing

/// The parse error for `bytes`, nil if the parse succeeded.
func jsonError(_ bytes: [UInt8]) -> JSONParseError? {
    do {
        _ = try JSONValue.parse(bytes)
        return nil
    } catch {
        return error
    }
}

func jsonError(_ text: String) -> JSONParseError? { jsonError(utf8Bytes(text)) }

func nested(_ depth: Int, open: String = "[", close: String = "]", inner: String = "") -> String {
    String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
}

@Suite("JSONValue.parse", .blocking)
struct JSONParserTests {
    @Test func scalarsAndContainers() throws {
        #expect(try JSONValue.parse("null") == .null)
        #expect(try JSONValue.parse("true") == .bool(true))
        #expect(try JSONValue.parse("false") == .bool(false))
        #expect(try JSONValue.parse("\"hi\"") == .string("hi"))
        #expect(try JSONValue.parse("[]") == .array([]))
        #expect(try JSONValue.parse("{}") == .object([]))
        #expect(
            try JSONValue.parse(" \t\r\n[ 1 , \"a\" , null , true , { } , [ ] ] \n")
                == .array([.integer(1), .string("a"), .null, .bool(true), .object([]), .array([])]))
        let object = try JSONValue.parse(#"{"type":"offer","id":7,"data":{"sdp":"v=0"},"list":[1,2.5]}"#)
        #expect(object["type"] == .string("offer"))
        #expect(object["id"]?.integerValue == 7)
        #expect(object["data"]?["sdp"]?.stringValue == "v=0")
        #expect(object["list"] == .array([.integer(1), .double(2.5)]))
        #expect(object["missing"] == nil)
        #expect(JSONValue.array([])["x"] == nil)
    }

    @Test func parsesFromBytesAndString() throws {
        let text = #"{"k":["v",1]}"#
        #expect(try JSONValue.parse(utf8Bytes(text)) == JSONValue.parse(text))
        #expect(try JSONValue.parse(utf8Bytes(text)[...]) == JSONValue.parse(text))
    }

    @Test func objectMemberOrderIsPreserved() throws {
        let value = try JSONValue.parse(#"{"b":1,"a":2,"c":3,"a0":4}"#)
        #expect(value.objectMembers?.map(\.key) == ["b", "a", "c", "a0"])
        #expect(value.serialized == #"{"b":1,"a":2,"c":3,"a0":4}"#)
        // Order matters for equality.
        #expect(try JSONValue.parse(#"{"a":1,"b":2}"#) != JSONValue.parse(#"{"b":2,"a":1}"#))
    }

    @Test func subscriptReturnsTheLastDuplicate() throws {
        let value = try JSONValue.parse(#"{"a":1,"b":true,"a":"two","a":3}"#)
        #expect(value["a"] == .integer(3))
        #expect(value.objectMembers?.count == 4)
        #expect(value.objectMembers?.map(\.key) == ["a", "b", "a", "a"])
    }

    // MARK: Numbers

    @Test func integersAndDoubles() throws {
        #expect(try JSONValue.parse("1") == .integer(1))
        #expect(try JSONValue.parse("0") == .integer(0))
        #expect(try JSONValue.parse("-0") == .integer(0))  // no fraction or exponent: an integer
        #expect(try JSONValue.parse("-17") == .integer(-17))
        #expect(try JSONValue.parse("1.5") == .double(1.5))
        #expect(try JSONValue.parse("1e3") == .double(1000))
        #expect(try JSONValue.parse("1E3") == .double(1000))
        #expect(try JSONValue.parse("1e+3") == .double(1000))
        #expect(try JSONValue.parse("1e-3") == .double(0.001))
        #expect(try JSONValue.parse("-1.25e2") == .double(-125))
        #expect(try JSONValue.parse("-0.0") == .double(0))
        #expect(try JSONValue.parse("1.0") == .double(1))
        #expect(try JSONValue.parse("9223372036854775807") == .integer(Int64.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .integer(Int64.min))
        #expect(try JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808.0))
        #expect(try JSONValue.parse("-9223372036854775809") == .double(-9_223_372_036_854_775_809.0))
        #expect(try JSONValue.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
        #expect(try JSONValue.parse("1e-400") == .double(0))
    }

    @Test func negativeZeroDoubleKeepsItsSign() throws {
        let value = try JSONValue.parse("-0.0")
        guard case .double(let d) = value else {
            Issue.record("expected a double, got \(value)")
            return
        }
        #expect(d.sign == .minus)
    }

    @Test func integerValueAccessor() throws {
        #expect(try JSONValue.parse("1e3").integerValue == 1000)
        #expect(try JSONValue.parse("1.5").integerValue == nil)
        #expect(try JSONValue.parse("42").integerValue == 42)
        #expect(try JSONValue.parse("\"42\"").integerValue == nil)
        #expect(try JSONValue.parse("1e19").integerValue == nil)
        #expect(JSONValue.bool(true).boolValue == true)
        #expect(JSONValue.null.boolValue == nil)
        #expect(JSONValue.integer(1).stringValue == nil)
    }

    @Test(
        "malformed numbers are rejected",
        arguments: [
            "01", "-01", "00", "007", "1.", ".5", "+1", "-", "--1", "1e", "1e+", "1E-", "0x10", "1.e3", "1..2",
            "Infinity", "-Infinity", "NaN", "1e400", "-1e400", "1 2", "0.", "-.5", "1e1.5", "١",
        ])
    func malformedNumbers(text: String) {
        #expect(jsonError(text) != nil, "\(text)")
        #expect(jsonError("[\(text)]") != nil, "[\(text)]")
    }

    // MARK: Strings and escapes

    @Test func escapesAreDecoded() throws {
        #expect(try JSONValue.parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try JSONValue.parse(#""\u0041\u00e9\u00E9\u20AC""#) == .string("Aéé€"))
        #expect(try JSONValue.parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try JSONValue.parse(#""\uD83D\uDE00""#) == .string("😀"))
        #expect(try JSONValue.parse(#""\ud83d\ude00x""#) == .string("😀x"))
        #expect(try JSONValue.parse(#""\uDBFF\uDFFF""#) == .string("\u{10FFFF}"))
        #expect(try JSONValue.parse(#""\uD800\uDC00""#) == .string("\u{10000}"))
        #expect(try JSONValue.parse(#""\uFFFF\uFFFE""#) == .string("\u{FFFF}\u{FFFE}"))
        #expect(try JSONValue.parse("\"raw é€😀 and \u{7F}\"") == .string("raw é€😀 and \u{7F}"))
        // Plain text before and after the first escape, and keys with escapes.
        #expect(try JSONValue.parse(#""abc\ndef\"x""#) == .string("abc\ndef\"x"))
        #expect(
            try JSONValue.parse(#"{"a\u0062c":"9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d","":""}"#)
                == .object([("abc", .string("9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d")), ("", .string(""))]))
    }

    @Test(
        "lone or broken surrogate escapes are rejected",
        arguments: [
            #""\uD800""#, #""\uDBFF""#, #""\uDC00""#, #""\uDFFF""#, #""\uD800x""#, #""\uD800\u0041""#,
            #""\uD800\uD800""#, #""\uDE00\uD83D""#, #""\uD800\n""#, #""\uD800\""#, #""\uD800\u""#, #""\uD800\uDC0""#,
        ])
    func loneSurrogates(text: String) {
        #expect(jsonError(text) != nil)
    }

    @Test(
        "invalid escapes are rejected",
        arguments: [
            #""\x41""#, #""\'""#, #""\u12""#, #""\u12G4""#, #""\U0041""#, #""\a""#, #""\0""#, #""\"#, #""\u""#,
            #""\ """#,
        ])
    func invalidEscapes(text: String) {
        #expect(jsonError(text) != nil)
    }

    @Test func unescapedControlCharactersAreRejected() {
        for byte in UInt8(0x00) ..< 0x20 {
            #expect(jsonError([0x22, byte, 0x22]) != nil, "control byte \(byte)")
        }
        #expect(jsonError([0x22, 0x7F, 0x22]) == nil)  // DEL is not a control character for JSON
    }

    @Test("invalid UTF-8 bytes are rejected", arguments: invalidUTF8Cases + truncatedUTF8Cases)
    func invalidUTF8(_ test: UTF8Case) {
        #expect(jsonError([0x22] + test.bytes + [0x22]) != nil)
        #expect(jsonError([0x5B, 0x22, 0x61, 0x22, 0x2C, 0x22] + test.bytes + [0x22, 0x5D]) != nil)
        #expect(jsonError(utf8Bytes(#"{"k":1}"#) + test.bytes) != nil)
    }

    // MARK: Strictness

    @Test(
        "non-JSON syntax is rejected",
        arguments: [
            "", " ", "[1,]", "[1,,2]", "[,1]", #"{"a":1,}"#, #"{,"a":1}"#, "{'a':1}", "'single'", #"{"a" 1}"#,
            #"{"a":}"#,
            "{a:1}", #"{"a":1 "b":2}"#, "[1 2]", "// comment\n1", "/* c */ 1", "1 // comment", "[1] /**/", "# 1",
            "[1]]", "{}}", "[1] x", "1 2", "null null", #""a" "b""#, "truex", "tru", "nul", "NULL", "True", "undefined",
            "[", "]", "{", "}", #"{"a""#, #"{"a":"#, #"{"a":1"#, "[1", #""unterminated"#, "\u{FEFF}1",
            "\u{C}1", "\u{A0}1", "1\u{0}", "[1]\u{0}", "{\"a\":1}garbage", "()", "[1;2]",
        ])
    func rejectsNonJSON(text: String) {
        #expect(jsonError(text) != nil, "\(text.debugDescription)")
    }

    @Test func nestingUpToMaxDepthIsAccepted() throws {
        #expect(JSONValue.maxDepth == 64)
        var arrays = try JSONValue.parse(nested(JSONValue.maxDepth, inner: "1"))
        var depth = 0
        while case .array(let values) = arrays {
            depth += 1
            arrays = values[0]
        }
        #expect(depth == 64)
        #expect(arrays == .integer(1))
        let objects = String(repeating: #"{"a":"#, count: 64) + "null" + String(repeating: "}", count: 64)
        #expect(jsonError(objects) == nil)
        // Depth is released when a container closes: siblings do not add up.
        let siblings =
            "[" + nested(63) + "," + nested(63) + "," + (0 ..< 100).map { _ in "[]" }.joined(separator: ",") + "]"
        #expect(jsonError(siblings) == nil)
    }

    @Test func nestingDeeperThanMaxDepthIsRejected() {
        #expect(jsonError(nested(JSONValue.maxDepth + 1)) != nil)
        let objects = String(repeating: #"{"a":"#, count: 65) + "null" + String(repeating: "}", count: 65)
        #expect(jsonError(objects) != nil)
        let mixed = String(repeating: #"[{"a":"#, count: 33) + "1" + String(repeating: "}]", count: 33)
        #expect(jsonError(mixed) != nil)
        // Very deep input fails cleanly rather than exhausting the stack.
        #expect(jsonError(String(repeating: "[", count: 200_000)) != nil)
        #expect(jsonError(nested(100_000)) != nil)
    }

    @Test func errorOffsetsPointAtTheProblem() {
        #expect(jsonError("[1,]")?.offset == 3)
        #expect(jsonError("1 x")?.offset == 2)
        #expect(jsonError(#"{"a" 1}"#)?.offset == 5)
        #expect(jsonError("[1")?.offset == 2)
        #expect(jsonError("01")?.offset == 1)
        #expect(jsonError("")?.offset == 0)
        let error = jsonError("[1,]")
        #expect(error?.description.hasSuffix("at byte 3") == true)
    }

    @Test func invalidUTF8ErrorOffsetPointsAtTheBadByte() {
        // JSONParseError.offset is documented as "the byte offset of the problem".
        let error = jsonError([0x5B, 0x22, 0x61, 0x62, 0x22, 0x2C, 0x22, 0xC0, 0x80, 0x22, 0x5D])  // ["ab","<C0 80>"]
        #expect(error != nil)
        #expect(error?.offset == 7)
    }
}
