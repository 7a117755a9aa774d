import SignalProtocol
import TestSupport
import Testing

/// The parameters of the first element of `header`.
func deflateParameters(_ header: String, isOffer: Bool) throws(WebSocketExtensionError) -> PerMessageDeflateParameters {
    let element = try WebSocketExtension.parseList([header])[0]
    return try PerMessageDeflateParameters(element.parameters, isOffer: isOffer)
}

/// The code `body` fails with, nil when it does not fail.
func extensionErrorCode<T>(_ body: () throws -> T) -> WebSocketExtensionError.Code? {
    do {
        _ = try body()
        return nil
    } catch {
        return (error as? WebSocketExtensionError)?.code
    }
}

@Suite("permessage-deflate: parameters", .blocking)
struct PerMessageDeflateParametersTests {
    @Test func everyParameterIsRead() throws {
        let offer = try deflateParameters(
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
                + "server_max_window_bits=10; client_max_window_bits=12", isOffer: true)
        #expect(
            offer
                == PerMessageDeflateParameters(
                    serverNoContextTakeover: true, clientNoContextTakeover: true,
                    serverMaxWindowBits: 10, clientMaxWindowBits: .bits(12)))
        #expect(try deflateParameters("permessage-deflate", isOffer: true) == PerMessageDeflateParameters())
    }

    @Test func clientMaxWindowBitsWithoutValueOnlyInOffers() throws {
        #expect(
            try deflateParameters("permessage-deflate; client_max_window_bits", isOffer: true).clientMaxWindowBits
                == .unspecified)
        #expect(
            extensionErrorCode { try deflateParameters("permessage-deflate; client_max_window_bits", isOffer: false) }
                == .invalidValue)
    }

    @Test("window bits must be 8...15 without leading zeros", arguments: ["7", "16", "08", "0", "1a", "-9", "150"])
    func badWindowBits(_ value: String) {
        for name in ["server_max_window_bits", "client_max_window_bits"] {
            #expect(
                extensionErrorCode { try deflateParameters("permessage-deflate; \(name)=\(value)", isOffer: true) }
                    == .invalidValue)
        }
    }

    @Test func everyWindowSizeFrom8To15IsAccepted() throws {
        for bits in 8 ... 15 {
            let offer = try deflateParameters(
                "permessage-deflate; server_max_window_bits=\(bits); client_max_window_bits=\"\(bits)\"",
                isOffer: true)
            #expect(offer.serverMaxWindowBits == bits)
            #expect(offer.clientMaxWindowBits == .bits(bits))
        }
    }

    @Test func serverMaxWindowBitsNeedsAValue() {
        #expect(
            extensionErrorCode { try deflateParameters("permessage-deflate; server_max_window_bits", isOffer: true) }
                == .invalidValue)
    }

    @Test(
        "the no-context-takeover flags take no value",
        arguments: ["server_no_context_takeover", "client_no_context_takeover"])
    func flagsTakeNoValue(_ name: String) {
        #expect(
            extensionErrorCode { try deflateParameters("permessage-deflate; \(name)=1", isOffer: true) }
                == .invalidValue)
    }

    @Test(
        "a repeated parameter is refused",
        arguments: [
            "server_no_context_takeover", "client_no_context_takeover", "server_max_window_bits=9",
            "client_max_window_bits",
        ])
    func duplicates(_ parameter: String) {
        #expect(
            extensionErrorCode {
                try deflateParameters("permessage-deflate; \(parameter); \(parameter)", isOffer: true)
            }
                == .duplicateParameter)
    }

    @Test func unknownParametersAreRefused() {
        #expect(
            extensionErrorCode { try deflateParameters("permessage-deflate; max_window_bits=10", isOffer: true) }
                == .unknownParameter)
        #expect(
            extensionErrorCode { try deflateParameters("permessage-deflate; x", isOffer: false) } == .unknownParameter)
    }

    @Test func headerValueRoundTrips() throws {
        let all = PerMessageDeflateParameters(
            serverNoContextTakeover: true, clientNoContextTakeover: true,
            serverMaxWindowBits: 9, clientMaxWindowBits: .unspecified)
        #expect(
            all.headerValue == "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
                + "server_max_window_bits=9; client_max_window_bits")
        #expect(try deflateParameters(all.headerValue, isOffer: true) == all)
        #expect(PerMessageDeflateParameters().headerValue == "permessage-deflate")
    }

    @Test func directionsFollowTheAgreedParameters() {
        let agreed = PerMessageDeflateParameters(
            serverNoContextTakeover: true, serverMaxWindowBits: 10,
            clientMaxWindowBits: .bits(11))
        #expect(agreed.serverToClient == PerMessageDeflateDirection(windowBits: 10, contextTakeover: false))
        #expect(agreed.clientToServer == PerMessageDeflateDirection(windowBits: 11, contextTakeover: true))
        #expect(
            PerMessageDeflateParameters().clientToServer
                == PerMessageDeflateDirection(windowBits: 15, contextTakeover: true))
    }
}
