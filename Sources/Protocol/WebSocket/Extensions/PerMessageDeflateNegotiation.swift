/// The compressor settings of one direction after negotiation.
public struct PerMessageDeflateDirection: Hashable, Sendable {
    /// The largest window (base-2 logarithm) the sender's compressor may use.
    public var windowBits: Int
    /// Whether the sender keeps its compression context from one message to the next.
    public var contextTakeover: Bool

    public init(windowBits: Int, contextTakeover: Bool) {
        self.windowBits = windowBits
        self.contextTakeover = contextTakeover
    }
}

extension PerMessageDeflateParameters {
    /// Server-to-client settings of these agreed parameters.
    public var serverToClient: PerMessageDeflateDirection {
        PerMessageDeflateDirection(windowBits: serverMaxWindowBits ?? 15, contextTakeover: !serverNoContextTakeover)
    }

    /// Client-to-server settings of these agreed parameters.
    public var clientToServer: PerMessageDeflateDirection {
        let bits: Int
        switch clientMaxWindowBits {
        case .bits(let value): bits = value
        case .absent, .unspecified: bits = 15
        }
        return PerMessageDeflateDirection(windowBits: bits, contextTakeover: !clientNoContextTakeover)
    }
}

/// permessage-deflate negotiation (RFC 7692 §5, §7.1): the server picks an
/// offer and answers it, the client checks the answer.
public enum PerMessageDeflateNegotiation {
    /// The smallest window the endpoints' own compressor can honour: zlib's
    /// raw deflate cannot work with 8 bits (RFC 7692 allows no rounding up),
    /// so an offer demanding `server_max_window_bits=8` is declined and a
    /// response with `client_max_window_bits=8` fails the client's handshake.
    public static let smallestCompressorWindowBits = 9

    /// The server's answer to a request's `Sec-WebSocket-Extensions` fields:
    /// the parameters to send back (nil: no offer acceptable, answer without
    /// the extension). Offers with invalid parameters, or demanding a window
    /// below ``smallestCompressorWindowBits``, are declined and the next one
    /// tried; other extensions are ignored. A header that breaks the grammar
    /// throws.
    ///
    /// With `contextTakeover` false the answer asks for no context takeover
    /// both ways, which the server may always do (§7.1.1).
    public static func accept(
        offers fieldValues: [String],
        contextTakeover: Bool
    ) throws(WebSocketExtensionError) -> PerMessageDeflateParameters? {
        for element in try WebSocketExtension.parseList(fieldValues)
        where element.name == PerMessageDeflateParameters.extensionName {
            guard let offer = try? PerMessageDeflateParameters(element.parameters, isOffer: true),
                offer.serverMaxWindowBits ?? 15 >= smallestCompressorWindowBits
            else { continue }
            return response(to: offer, contextTakeover: contextTakeover)
        }
        return nil
    }

    /// The answer to one valid offer: the no-context-takeover flags offered
    /// (and both when the server keeps no context), the offered
    /// `server_max_window_bits`, and no `client_max_window_bits` (the server
    /// inflates with a 15-bit window, which reads every smaller one).
    public static func response(
        to offer: PerMessageDeflateParameters,
        contextTakeover: Bool
    ) -> PerMessageDeflateParameters {
        PerMessageDeflateParameters(
            serverNoContextTakeover: offer.serverNoContextTakeover || !contextTakeover,
            clientNoContextTakeover: offer.clientNoContextTakeover || !contextTakeover,
            serverMaxWindowBits: offer.serverMaxWindowBits)
    }

    /// The client's check of the response's `Sec-WebSocket-Extensions` fields
    /// against what it offered (nil: nothing offered). Returns the agreed
    /// parameters, or nil when the server declined; throws when the response
    /// breaks §7: an extension not offered, more than one, unknown or repeated
    /// parameters, bad values, `server_max_window_bits` above the offered
    /// limit, or `client_max_window_bits` the client did not offer or its
    /// compressor cannot honour (below ``smallestCompressorWindowBits``).
    public static func validate(
        response fieldValues: [String],
        offer: PerMessageDeflateParameters?
    ) throws(WebSocketExtensionError) -> PerMessageDeflateParameters? {
        let elements = try WebSocketExtension.parseList(fieldValues)
        guard let element = elements.first else { return nil }
        guard let offer, element.name == PerMessageDeflateParameters.extensionName else {
            throw WebSocketExtensionError(
                .notOffered, "the server chose the extension \(element.name), which was not offered")
        }
        guard elements.count == 1 else {
            throw WebSocketExtensionError(.notOffered, "the server chose \(elements.count) extensions; one was offered")
        }
        let response = try PerMessageDeflateParameters(element.parameters, isOffer: false)
        if let limit = offer.serverMaxWindowBits, let bits = response.serverMaxWindowBits, bits > limit {
            throw WebSocketExtensionError(
                .notOffered, "server_max_window_bits=\(bits) is larger than the \(limit) offered")
        }
        if case .bits(let bits) = response.clientMaxWindowBits {
            if offer.clientMaxWindowBits == .absent {
                throw WebSocketExtensionError(.notOffered, "client_max_window_bits=\(bits) was not offered")
            }
            if bits < smallestCompressorWindowBits {
                throw WebSocketExtensionError(
                    .unsupportedValue,
                    "client_max_window_bits=\(bits) is below the \(smallestCompressorWindowBits) zlib can compress with"
                )
            }
        }
        return response
    }
}
