/// The permessage-deflate parameters (RFC 7692 §7.1), as an offer or a
/// response carries them: parsed with the rules of §7 and written back.
public struct PerMessageDeflateParameters: Hashable, Sendable {
    /// The extension token.
    public static let extensionName = "permessage-deflate"
    /// The window sizes (base-2 logarithm) the RFC allows.
    public static let windowBitsRange = 8 ... 15
    /// What ringd's clients offer: permessage-deflate, accepting any window
    /// limit the server sets for the client's compressor.
    public static let clientOffer = PerMessageDeflateParameters(clientMaxWindowBits: .unspecified)

    /// How `client_max_window_bits` appears.
    public enum ClientWindowBits: Hashable, Sendable {
        case absent
        /// Present without a value (offers only): the client can honour a limit.
        case unspecified
        /// Present with this value (8...15).
        case bits(Int)
    }

    /// `server_no_context_takeover`: the server resets its compressor after each message.
    public var serverNoContextTakeover = false
    /// `client_no_context_takeover`: the client resets its compressor after each message.
    public var clientNoContextTakeover = false
    /// `server_max_window_bits`: the largest window the server's compressor may use.
    public var serverMaxWindowBits: Int?
    /// `client_max_window_bits`.
    public var clientMaxWindowBits = ClientWindowBits.absent

    public init(
        serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false,
        serverMaxWindowBits: Int? = nil, clientMaxWindowBits: ClientWindowBits = .absent
    ) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }

    /// Validates the parameters of one permessage-deflate element: no unknown
    /// or repeated parameter, no value on the two flags, window bits 8...15,
    /// and `client_max_window_bits` without a value only when `isOffer`.
    public init(_ parameters: [WebSocketExtension.Parameter], isOffer: Bool) throws(WebSocketExtensionError) {
        var seen: Set<String> = []
        for parameter in parameters {
            guard seen.insert(parameter.name).inserted else {
                throw WebSocketExtensionError(.duplicateParameter, "\(parameter.name) appears twice")
            }
            switch parameter.name {
            case "server_no_context_takeover":
                try Self.expectNoValue(parameter)
                serverNoContextTakeover = true
            case "client_no_context_takeover":
                try Self.expectNoValue(parameter)
                clientNoContextTakeover = true
            case "server_max_window_bits":
                serverMaxWindowBits = try Self.windowBits(parameter)
            case "client_max_window_bits":
                if parameter.value == nil && isOffer {
                    clientMaxWindowBits = .unspecified
                } else {
                    clientMaxWindowBits = .bits(try Self.windowBits(parameter))
                }
            default:
                throw WebSocketExtensionError(.unknownParameter, "unknown parameter \(parameter.name)")
            }
        }
    }

    private static func expectNoValue(_ parameter: WebSocketExtension.Parameter) throws(WebSocketExtensionError) {
        if parameter.value != nil {
            throw WebSocketExtensionError(.invalidValue, "\(parameter.name) takes no value")
        }
    }

    /// A window-bits value: 1–2 decimal digits, no leading zero, 8...15.
    private static func windowBits(_ parameter: WebSocketExtension.Parameter) throws(WebSocketExtensionError) -> Int {
        guard let text = parameter.value, text.first != "0", text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let bits = Int(text), windowBitsRange.contains(bits)
        else {
            throw WebSocketExtensionError(.invalidValue, "\(parameter.name) must be a number from 8 to 15")
        }
        return bits
    }

    /// The parameters as a permessage-deflate element.
    public var element: WebSocketExtension {
        var parameters: [WebSocketExtension.Parameter] = []
        if serverNoContextTakeover { parameters.append(.init("server_no_context_takeover")) }
        if clientNoContextTakeover { parameters.append(.init("client_no_context_takeover")) }
        if let bits = serverMaxWindowBits { parameters.append(.init("server_max_window_bits", String(bits))) }
        switch clientMaxWindowBits {
        case .absent: break
        case .unspecified: parameters.append(.init("client_max_window_bits"))
        case .bits(let bits): parameters.append(.init("client_max_window_bits", String(bits)))
        }
        return WebSocketExtension(Self.extensionName, parameters)
    }

    /// The `Sec-WebSocket-Extensions` value: `permessage-deflate; …`.
    public var headerValue: String { element.headerValue }
}
