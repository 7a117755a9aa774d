import SignalProtocol
import TestSupport
import Testing

@Suite("JSONValue serialization", .blocking)
struct JSONWriterTests {
    @Test func compactOutput() {
        let value = JSONValue.object([
            ("type", .string("answer")), ("n", .integer(-3)), ("ok", .bool(true)), ("none", .null),
            ("list", .array([.integer(1), .double(2.5), .array([]), .object([])])),
        ])
        #expect(value.serialized == #"{"type":"answer","n":-3,"ok":true,"none":null,"list":[1,2.5,[],{}]}"#)
        var out: [UInt8] = [0x78]  // write(into:) appends
        value.write(into: &out)
        #expect(out == [0x78] + utf8Bytes(value.serialized))
    }

    @Test func integersAreWrittenExactly() {
        #expect(JSONValue.integer(0).serialized == "0")
        #expect(JSONValue.integer(Int64.max).serialized == "9223372036854775807")
        #expect(JSONValue.integer(Int64.min).serialized == "-9223372036854775808")
        for value: Int64 in [7, 10, 12, 305, 1000, 1764466800000, -42, -1001] {
            #expect(JSONValue.integer(value).serialized == String(value))
        }
        var appended = Array("[1,".utf8)
        JSONValue.writeInteger(1234, into: &appended)
        #expect(appended == Array("[1,1234".utf8), "digits reversed in place after what the buffer held")
    }

    @Test func nonFiniteDoublesBecomeNull() {
        #expect(JSONValue.double(.infinity).serialized == "null")
        #expect(JSONValue.double(-.infinity).serialized == "null")
        #expect(JSONValue.double(.nan).serialized == "null")
    }

    @Test func quotesBackslashesAndControlCharactersAreEscaped() {
        #expect(JSONValue.string("a\"b").serialized == #""a\"b""#)
        #expect(JSONValue.string("a\\b").serialized == #""a\\b""#)
        #expect(JSONValue.string("\n\r\t").serialized == #""\n\r\t""#)
        #expect(JSONValue.string("\u{0}\u{1}\u{8}\u{C}\u{1F}").serialized == #""\u0000\u0001\u0008\u000c\u001f""#)
        #expect(JSONValue.string("/ é€😀 \u{7F}").serialized == "\"/ é€😀 \u{7F}\"")
        #expect(JSONValue.object([("k\"\n", .string("v"))]).serialized == #"{"k\"\n":"v"}"#)
    }

    @Test func everyControlCharacterIsEscaped() throws {
        for value in UInt8(0x00) ..< 0x20 {
            let text = String(decoding: [value], as: UTF8.self)
            let written = JSONValue.string(text).serialized
            #expect(!written.utf8.contains { $0 < 0x20 }, "control \(value)")
            #expect(try JSONValue.parse(written) == .string(text))
        }
    }

    @Test func writeStringAppends() {
        var out: [UInt8] = utf8Bytes("x=")
        JSONValue.writeString("q\"", into: &out)
        #expect(out == utf8Bytes(#"x="q\"""#))
    }

    static let roundTripValues: [JSONValue] = [
        .null, .bool(true), .bool(false), .integer(0), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .double(1.5), .double(-0.25), .double(0.1), .double(1e300), .double(.leastNonzeroMagnitude), .double(1.0),
        .double(-2.0),
        .double(123456789.123), .double(1e-7), .double(Double.greatestFiniteMagnitude),
        .string(""), .string("plain"), .string("\"quoted\" \\ back/slash"), .string("\u{0}\u{1F}\n\t\r\u{8}\u{C}"),
        .string("é€😀\u{10FFFF}\u{FFFE}"), .string("\u{2028}\u{2029}"),
        .array([]), .object([]),
        .array([.integer(1), .array([.array([.null])]), .object([("a", .string("b"))])]),
        .object([("z", .integer(1)), ("a", .integer(2)), ("z", .integer(3)), ("", .null), ("é😀", .array([]))]),
    ]

    @Test("serialize then parse gives the same value", arguments: roundTripValues)
    func roundTrip(value: JSONValue) throws {
        let text = value.serialized
        let parsed = try JSONValue.parse(text)
        #expect(parsed == value, "\(text)")
        #expect(parsed.serialized == text)
    }

    @Test func integersStayIntegersAndDoublesStayDoubles() throws {
        #expect(try JSONValue.parse(JSONValue.integer(5).serialized) == .integer(5))
        #expect(try JSONValue.parse(JSONValue.double(5).serialized) == .double(5))
        #expect(JSONValue.integer(5) != JSONValue.double(5))
    }

    @Test(
        "parse then serialize is stable",
        arguments: [
            #"{"a":[1,2,{"b":null}],"c":"d\n","e":-1.5,"f":true}"#,
            #"[[[]],{},"",0,-0.5]"#,
            #"{"dup":1,"dup":2}"#,
        ])
    func parseSerialize(text: String) throws {
        let value = try JSONValue.parse(text)
        #expect(value.serialized == text)
    }

    @Test func deepestAcceptedValueRoundTrips() throws {
        var value = JSONValue.integer(7)
        for level in 0 ..< JSONValue.maxDepth {
            value = level.isMultiple(of: 2) ? .array([value]) : .object([("k", value)])
        }
        let text = value.serialized
        #expect(try JSONValue.parse(text) == value)
        // One more level is too deep for the parser.
        #expect(jsonError(JSONValue.array([value]).serialized) != nil)
    }

    @Test("random values round trip", arguments: 0 ..< 6)
    func randomRoundTrip(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &* 7919)
        func randomString() -> String {
            let pieces = ["a", "Z", "\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "é", "€", "😀", " ", "\u{7F}"]
            return (0 ..< rng.int(in: 0 ... 6)).map { _ in pieces[rng.int(in: 0 ... pieces.count - 1)] }.joined()
        }
        func randomValue(depth: Int) -> JSONValue {
            switch rng.int(in: 0 ... (depth > 5 ? 4 : 6)) {
            case 0: return .null
            case 1: return .bool(rng.int(in: 0 ... 1) == 1)
            case 2: return .integer(Int64(bitPattern: rng.next()))
            case 3: return .double(Double(Int32(truncatingIfNeeded: rng.next())) / 64)
            case 4: return .string(randomString())
            case 5: return .array((0 ..< rng.int(in: 0 ... 4)).map { _ in randomValue(depth: depth + 1) })
            default:
                return .object(
                    (0 ..< rng.int(in: 0 ... 4)).map { _ in (randomString(), randomValue(depth: depth + 1)) })
            }
        }
        for _ in 0 ..< 200 {
            let value = randomValue(depth: 0)
            let parsed = try JSONValue.parse(value.serialized)
            #expect(parsed == value, "\(value.serialized)")
        }
    }

    @Test func hashingAgreesWithEquality() {
        let a = JSONValue.object([("x", .array([.integer(1), .string("s")]))])
        let b = JSONValue.object([("x", .array([.integer(1), .string("s")]))])
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b, .null]).count == 2)
        #expect(JSONValue.double(0.0).hashValue == JSONValue.double(-0.0).hashValue)
    }
}
