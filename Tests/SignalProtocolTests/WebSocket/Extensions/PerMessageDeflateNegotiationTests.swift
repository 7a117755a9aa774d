import SignalProtocol
import TestSupport
import Testing

@Suite("permessage-deflate: the server's choice", .blocking)
struct DeflateServerNegotiationTests {
    private func accept(_ offers: [String], contextTakeover: Bool = false) throws -> String? {
        try PerMessageDeflateNegotiation.accept(offers: offers, contextTakeover: contextTakeover)?.headerValue
    }

    @Test func withoutContextTakeoverTheAnswerAsksForNoneBothWays() throws {
        #expect(
            try accept(["permessage-deflate; client_max_window_bits"])
                == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
    }

    @Test func withContextTakeoverOnlyOfferedFlagsAreEchoed() throws {
        #expect(
            try accept(["permessage-deflate; client_max_window_bits"], contextTakeover: true) == "permessage-deflate")
        #expect(
            try accept(["permessage-deflate; client_no_context_takeover"], contextTakeover: true)
                == "permessage-deflate; client_no_context_takeover")
        #expect(
            try accept(
                ["permessage-deflate; server_no_context_takeover; server_max_window_bits=10"], contextTakeover: true)
                == "permessage-deflate; server_no_context_takeover; server_max_window_bits=10")
    }

    @Test func theFirstAcceptableOfferWinsAndInvalidOnesAreDeclined() throws {
        let offers = [
            "x-foo; a=1, permessage-deflate; bogus, permessage-deflate; server_max_window_bits=7",
            "permessage-deflate; server_max_window_bits=11, permessage-deflate",
        ]
        #expect(try accept(offers, contextTakeover: true) == "permessage-deflate; server_max_window_bits=11")
    }

    @Test func anEightBitServerWindowIsDeclinedForTheNextOffer() throws {
        #expect(try accept(["permessage-deflate; server_max_window_bits=8"]) == nil)
        #expect(
            try accept(
                ["permessage-deflate; server_max_window_bits=8, permessage-deflate; server_max_window_bits=9"],
                contextTakeover: true) == "permessage-deflate; server_max_window_bits=9")
    }

    @Test func nothingAcceptableMeansNoExtension() throws {
        #expect(try accept([]) == nil)
        #expect(try accept(["x-webkit-deflate-frame"]) == nil)
        #expect(try accept(["permessage-deflate; client_max_window_bits=16"]) == nil)
    }

    @Test func aMalformedHeaderThrows() {
        #expect(extensionErrorCode { try accept(["permessage-deflate; =x"]) } == .malformedHeader)
    }
}

@Suite("permessage-deflate: the client's check", .blocking)
struct DeflateClientNegotiationTests {
    static let offer = PerMessageDeflateParameters(clientMaxWindowBits: .unspecified)

    private func validate(
        _ response: [String], offer: PerMessageDeflateParameters? = offer
    )
        throws(WebSocketExtensionError) -> PerMessageDeflateParameters?
    {
        try PerMessageDeflateNegotiation.validate(response: response, offer: offer)
    }

    @Test func acceptedAnswersAreReturned() throws {
        #expect(try validate([]) == nil)
        #expect(try validate(["permessage-deflate"]) == PerMessageDeflateParameters())
        let full = try validate([
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
                + "server_max_window_bits=10; client_max_window_bits=9"
        ])
        #expect(
            full
                == PerMessageDeflateParameters(
                    serverNoContextTakeover: true, clientNoContextTakeover: true,
                    serverMaxWindowBits: 10, clientMaxWindowBits: .bits(9)))
    }

    @Test func answersBeyondTheOfferFail() throws {
        #expect(extensionErrorCode { try validate(["permessage-deflate"], offer: nil) } == .notOffered)
        #expect(extensionErrorCode { try validate(["x-other"]) } == .notOffered)
        #expect(extensionErrorCode { try validate(["permessage-deflate, permessage-deflate"]) } == .notOffered)
        #expect(
            extensionErrorCode {
                try validate(
                    ["permessage-deflate; client_max_window_bits=10"],
                    offer: PerMessageDeflateParameters())
            } == .notOffered)
        let limited = PerMessageDeflateParameters(serverMaxWindowBits: 10)
        #expect(
            extensionErrorCode { try validate(["permessage-deflate; server_max_window_bits=11"], offer: limited) }
                == .notOffered)
        #expect(
            try validate(["permessage-deflate; server_max_window_bits=9"], offer: limited)?.serverMaxWindowBits == 9)
    }

    @Test func invalidParametersFail() {
        #expect(extensionErrorCode { try validate(["permessage-deflate; client_max_window_bits"]) } == .invalidValue)
        #expect(extensionErrorCode { try validate(["permessage-deflate; unknown"]) } == .unknownParameter)
        #expect(
            extensionErrorCode {
                try validate(["permessage-deflate; server_no_context_takeover; server_no_context_takeover"])
            }
                == .duplicateParameter)
        #expect(extensionErrorCode { try validate(["permessage-deflate; server_max_window_bits=16"]) } == .invalidValue)
        #expect(extensionErrorCode { try validate(["permessage-deflate;"]) } == .malformedHeader)
    }

    @Test func anEightBitClientWindowCannotBeHonoured() {
        #expect(
            extensionErrorCode { try validate(["permessage-deflate; client_max_window_bits=8"]) } == .unsupportedValue)
    }
}
