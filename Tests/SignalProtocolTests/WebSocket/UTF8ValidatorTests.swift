import SignalProtocol
import TestSupport
import Testing

/// A UTF-8 test vector: the bytes and, for invalid input, the index of the
/// first byte that cannot continue a well-formed sequence. `truncated` input is
/// valid so far but ends inside a character.
struct UTF8Case: CustomTestStringConvertible, Sendable {
    enum Verdict: Equatable, Sendable {
        case valid
        case truncated
        case invalid(at: Int)
    }

    var name: String
    var bytes: [UInt8]
    var verdict: Verdict

    var testDescription: String { name }

    static func valid(_ name: String, _ bytes: [UInt8]) -> UTF8Case {
        UTF8Case(name: name, bytes: bytes, verdict: .valid)
    }
    static func truncated(_ name: String, _ bytes: [UInt8]) -> UTF8Case {
        UTF8Case(name: name, bytes: bytes, verdict: .truncated)
    }
    static func invalid(_ name: String, _ bytes: [UInt8], at index: Int) -> UTF8Case {
        UTF8Case(name: name, bytes: bytes, verdict: .invalid(at: index))
    }
}

let validUTF8Cases: [UTF8Case] = [
    .valid("empty", []),
    .valid("ASCII", utf8Bytes("Hello, world! ~\u{7F}\u{0}")),
    .valid("2-byte é", [0xC3, 0xA9]),
    .valid("3-byte €", [0xE2, 0x82, 0xAC]),
    .valid("4-byte 😀", [0xF0, 0x9F, 0x98, 0x80]),
    .valid("Kuhn 1: Greek kosme", [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5]),
    // Kuhn 2.1: first possible sequence of each length.
    .valid("U+0000", [0x00]),
    .valid("U+0080", [0xC2, 0x80]),
    .valid("U+0800", [0xE0, 0xA0, 0x80]),
    .valid("U+10000", [0xF0, 0x90, 0x80, 0x80]),
    // Kuhn 2.2: last possible sequence of each (legal) length.
    .valid("U+007F", [0x7F]),
    .valid("U+07FF", [0xDF, 0xBF]),
    .valid("U+FFFF noncharacter", [0xEF, 0xBF, 0xBF]),
    .valid("U+10FFFF", [0xF4, 0x8F, 0xBF, 0xBF]),
    // Kuhn 2.3: other boundary conditions.
    .valid("U+D7FF", [0xED, 0x9F, 0xBF]),
    .valid("U+E000", [0xEE, 0x80, 0x80]),
    .valid("U+FFFD", [0xEF, 0xBF, 0xBD]),
    // Kuhn 5.3: noncharacters are valid UTF-8.
    .valid("U+FFFE noncharacter", [0xEF, 0xBF, 0xBE]),
    .valid("U+FDD0 noncharacter", [0xEF, 0xB7, 0x90]),
    .valid("U+1FFFE noncharacter", [0xF0, 0x9F, 0xBF, 0xBE]),
    .valid("U+10FFFE noncharacter", [0xF4, 0x8F, 0xBF, 0xBE]),
    .valid("mixed", utf8Bytes("aé€😀z")),
]

let truncatedUTF8Cases: [UTF8Case] = [
    // Kuhn 3.3: sequences with the last continuation byte missing.
    .truncated("lead of 2", [0xDF]),
    .truncated("2 of 3", [0xEF, 0xBF]),
    .truncated("1 of 3 (E0)", [0xE0]),
    .truncated("3 of 4", [0xF4, 0x8F, 0xBF]),
    .truncated("2 of 4 (F0 90)", [0xF0, 0x90]),
    .truncated("ASCII then lead", [0x41, 0xC3]),
    .truncated("valid then 3 of 4", [0xC3, 0xA9, 0xF0, 0x9F, 0x98]),
]

let invalidUTF8Cases: [UTF8Case] = [
    // Overlong forms (Kuhn 4.1, 4.2).
    .invalid("overlong C0 80", [0xC0, 0x80], at: 0),
    .invalid("overlong C1 BF", [0xC1, 0xBF], at: 0),
    .invalid("overlong C0 AF '/'", [0xC0, 0xAF], at: 0),
    .invalid("overlong E0 80 80", [0xE0, 0x80, 0x80], at: 1),
    .invalid("overlong E0 9F BF", [0xE0, 0x9F, 0xBF], at: 1),
    .invalid("overlong E0 80 AF '/'", [0xE0, 0x80, 0xAF], at: 1),
    .invalid("overlong F0 80 80 80", [0xF0, 0x80, 0x80, 0x80], at: 1),
    .invalid("overlong F0 8F BF BF", [0xF0, 0x8F, 0xBF, 0xBF], at: 1),
    .invalid("overlong F0 80 80 AF '/'", [0xF0, 0x80, 0x80, 0xAF], at: 1),
    .invalid("5-byte overlong F8", [0xF8, 0x88, 0x80, 0x80, 0x80], at: 0),
    .invalid("6-byte overlong FC", [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80], at: 0),
    // Surrogates (Kuhn 5.1, 5.2).
    .invalid("surrogate ED A0 80", [0xED, 0xA0, 0x80], at: 1),
    .invalid("surrogate ED AD BF", [0xED, 0xAD, 0xBF], at: 1),
    .invalid("surrogate ED AE 80", [0xED, 0xAE, 0x80], at: 1),
    .invalid("surrogate ED B0 80", [0xED, 0xB0, 0x80], at: 1),
    .invalid("surrogate ED BF BF", [0xED, 0xBF, 0xBF], at: 1),
    .invalid("paired surrogates", [0xED, 0xA0, 0x80, 0xED, 0xB0, 0x80], at: 1),
    .invalid("surrogate after text", utf8Bytes("ok") + [0xED, 0xA0, 0x80], at: 3),
    // Above U+10FFFF.
    .invalid("F4 90 80 80", [0xF4, 0x90, 0x80, 0x80], at: 1),
    .invalid("F4 BF BF BF", [0xF4, 0xBF, 0xBF, 0xBF], at: 1),
    .invalid("F5 lead", [0xF5, 0x80, 0x80, 0x80], at: 0),
    .invalid("F7 BF BF BF", [0xF7, 0xBF, 0xBF, 0xBF], at: 0),
    .invalid("FE", [0xFE], at: 0),
    .invalid("FF", [0xFF], at: 0),
    .invalid("FE FE FF FF", [0xFE, 0xFE, 0xFF, 0xFF], at: 0),
    // Lone continuation bytes (Kuhn 3.1).
    .invalid("lone 80", [0x80], at: 0),
    .invalid("lone BF", [0xBF], at: 0),
    .invalid("ASCII then 80", [0x61, 0x80], at: 1),
    .invalid("2-byte char then extra continuation", [0xC3, 0xA9, 0xA9], at: 2),
    .invalid("4-byte char then extra continuation", [0xF0, 0x9F, 0x98, 0x80, 0x80], at: 4),
    // Lead bytes followed by something other than a continuation (Kuhn 3.2, 3.4).
    .invalid("C2 then space", [0xC2, 0x20], at: 1),
    .invalid("E1 80 then ASCII", [0xE1, 0x80, 0x41], at: 2),
    .invalid("F1 80 80 then lead", [0xF1, 0x80, 0x80, 0xC3], at: 3),
    .invalid("concatenated incomplete sequences", [0xC2, 0xE0, 0x80, 0xF0, 0x80, 0x80], at: 1),
    .invalid("kosme then bad byte", [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xC0], at: 11),
]

let allUTF8Cases = validUTF8Cases + truncatedUTF8Cases + invalidUTF8Cases

/// The observable outcome of feeding some chunks.
struct UTF8Outcome: Equatable {
    var allFeedsSucceeded: Bool
    var isAtBoundary: Bool
    var hasFailed: Bool
}

func feedChunks(_ chunks: [ArraySlice<UInt8>]) -> UTF8Outcome {
    var validator = UTF8Validator()
    var ok = true
    for chunk in chunks { ok = validator.feed(chunk) && ok }
    return UTF8Outcome(allFeedsSucceeded: ok, isAtBoundary: validator.isAtBoundary, hasFailed: validator.hasFailed)
}

@Suite("UTF8Validator", .blocking)
struct UTF8ValidatorTests {
    @Test("verdict of a single feed", arguments: allUTF8Cases)
    func singleFeedVerdict(_ test: UTF8Case) {
        var validator = UTF8Validator()
        let accepted = validator.feed(test.bytes)
        switch test.verdict {
        case .valid:
            #expect(accepted)
            #expect(validator.isAtBoundary)
            #expect(!validator.hasFailed)
            #expect(UTF8Validator.isValid(test.bytes))
        case .truncated:
            #expect(accepted)
            #expect(!validator.isAtBoundary)
            #expect(!validator.hasFailed)
            #expect(!UTF8Validator.isValid(test.bytes))
        case .invalid:
            #expect(!accepted)
            #expect(!validator.isAtBoundary)
            #expect(validator.hasFailed)
            #expect(!UTF8Validator.isValid(test.bytes))
        }
    }

    @Test("fails at exactly the first invalid byte when fed byte by byte", arguments: allUTF8Cases)
    func failsFast(_ test: UTF8Case) {
        var validator = UTF8Validator()
        var firstFailure: Int?
        for (index, byte) in test.bytes.enumerated() {
            let accepted = validator.feed(CollectionOfOne(byte))
            if !accepted && firstFailure == nil { firstFailure = index }
            // Once failed, the validator stays failed.
            if firstFailure != nil {
                #expect(!accepted)
                #expect(validator.hasFailed)
            } else {
                #expect(!validator.hasFailed)
            }
        }
        switch test.verdict {
        case .valid, .truncated: #expect(firstFailure == nil)
        case .invalid(let index): #expect(firstFailure == index)
        }
    }

    @Test("every two-way split gives the same verdict as one feed", arguments: allUTF8Cases)
    func twoWaySplits(_ test: UTF8Case) {
        let whole = feedChunks([test.bytes[...]])
        for cut in 0 ... test.bytes.count {
            let split = feedChunks([test.bytes[..<cut], test.bytes[cut...]])
            #expect(split == whole, "cut at \(cut)")
        }
    }

    @Test("every three-way split gives the same verdict as one feed", arguments: allUTF8Cases)
    func threeWaySplits(_ test: UTF8Case) {
        let whole = feedChunks([test.bytes[...]])
        let count = test.bytes.count
        for first in 0 ... count {
            for second in first ... count {
                let split = feedChunks([test.bytes[..<first], test.bytes[first ..< second], test.bytes[second...]])
                #expect(split == whole, "cuts at \(first), \(second)")
            }
        }
    }

    @Test func failureIsSticky() {
        var validator = UTF8Validator()
        let first = validator.feed([0xFF])
        let second = validator.feed(utf8Bytes("plain ASCII"))
        let third = validator.feed([UInt8]())
        #expect(!first && !second && !third)
        #expect(validator.hasFailed)
        #expect(!validator.isAtBoundary)
    }

    @Test func truncatedCharacterCompletedByALaterFeed() {
        var validator = UTF8Validator()
        var results: [Bool] = []
        var boundaries: [Bool] = []
        for chunk: [UInt8] in [[0xF0, 0x9F], [0x98], [0x80]] {
            results.append(validator.feed(chunk))
            boundaries.append(validator.isAtBoundary)
        }
        #expect(results == [true, true, true])
        #expect(boundaries == [false, false, true])
    }

    @Test func surrogateDetectedAcrossFeeds() {
        var validator = UTF8Validator()
        let lead = validator.feed([0xED])
        let second = validator.feed([0xA0])
        #expect(lead)
        #expect(!second)
        #expect(validator.hasFailed)
    }

    @Test func rawBufferFeed() {
        var validator = UTF8Validator()
        let good: [UInt8] = [0xE2, 0x82]
        let first = good.withUnsafeBytes { validator.feed($0) }
        #expect(first)
        #expect(!validator.isAtBoundary)
        let rest: [UInt8] = [0xAC, 0x41]
        let second = rest.withUnsafeBytes { validator.feed($0) }
        #expect(second)
        #expect(validator.isAtBoundary)
        let bad: [UInt8] = [0xC0, 0x80]
        let third = bad.withUnsafeBytes { validator.feed($0) }
        #expect(!third)
        #expect(validator.hasFailed)
        var empty = UTF8Validator()
        let none = empty.feed(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(none)
        #expect(empty.isAtBoundary)
    }

    @Test func everyLeadByteAboveF4AndC0C1IsRejectedAtOnce() {
        for lead in Array(UInt8(0xF5) ... 0xFF) + [0xC0, 0xC1] {
            var validator = UTF8Validator()
            let prefix = validator.feed(utf8Bytes("ok"))
            let accepted = validator.feed(CollectionOfOne(lead))
            #expect(prefix)
            #expect(!accepted, "lead \(lead)")
            #expect(validator.hasFailed)
        }
    }

    @Test func everyScalarBoundaryIsValid() {
        // Encodes every 251st scalar plus the edges of each range and checks it.
        var scalars: [UInt32] = Array(stride(from: 0, through: 0x10FFFF, by: 251))
        scalars += [0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF]
        for value in scalars {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let encoded = Array(String(scalar).utf8)
            #expect(UTF8Validator.isValid(encoded), "U+\(String(value, radix: 16))")
        }
    }

    @Test func everySurrogateEncodingIsRejected() {
        for value in UInt32(0xD800) ... 0xDFFF {
            let encoded: [UInt8] = [
                0xE0 | UInt8(value >> 12), 0x80 | UInt8((value >> 6) & 0x3F), 0x80 | UInt8(value & 0x3F),
            ]
            #expect(!UTF8Validator.isValid(encoded), "U+\(String(value, radix: 16))")
        }
    }

    @Test func everyLeadAndContinuationPairMatchesTheStandardLibrary() {
        // Differential check of all two- and three-byte prefixes built from a
        // lead byte and a second byte, completed with valid continuations.
        var mismatches: [[UInt8]] = []
        var validCount = 0
        for lead in UInt8(0) ... 0xFF {
            for second in UInt8(0) ... 0xFF {
                let input: [UInt8] = [lead, second, 0x80, 0x80]
                let expected = String(validating: input, as: UTF8.self) != nil
                if expected { validCount += 1 }
                if UTF8Validator.isValid(input) != expected { mismatches.append(input) }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(20))")
        #expect(validCount > 0)
    }

    @Test("random byte strings agree with the standard library", arguments: 0 ..< 8)
    func randomDifferential(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 0xC0FFEE)
        // Bias towards bytes that matter for UTF-8 so valid inputs also occur.
        let alphabet: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
            0xDF, 0xE0, 0xE1, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF,
        ]
        var validCount = 0
        for _ in 0 ..< 3_000 {
            let length = rng.int(in: 0 ... 8)
            let input = (0 ..< length).map { _ in alphabet[rng.int(in: 0 ... alphabet.count - 1)] }
            let expected = String(validating: input, as: UTF8.self) != nil
            if expected { validCount += 1 }
            #expect(UTF8Validator.isValid(input) == expected, "\(input)")
            // Any two-way split agrees with the whole.
            let cut = rng.int(in: 0 ... length)
            #expect(feedChunks([input[..<cut], input[cut...]]) == feedChunks([input[...]]))
        }
        #expect(validCount > 0)
    }
}
