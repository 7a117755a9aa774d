import SignalProtocol

/// The LiveKit server whose rooms calls join after accept (`media.livekit.*`):
/// ringd mints access tokens for a call's parties (``LiveKitToken``), and
/// LiveKit checks them with the same key and secret.
public struct LiveKitSettings: Sendable, Equatable {
    /// The URL clients connect to (`media.livekit.url`), e.g. `wss://media.example`.
    public var url: String?
    /// The API key, the tokens' issuer (`media.livekit.apiKey`).
    public var apiKey: String?
    /// The API secret that signs the tokens (`media.livekit.apiSecret`).
    public var apiSecret: String?
    /// How long a token admits its holder (`media.livekit.tokenSeconds`).
    /// Short: a token is minted per join, and LiveKit keeps a participant
    /// that joined in the room past it.
    public var tokenSeconds = 600

    public init() {}

    /// Whether tokens can be minted: the URL, the key and the secret are set.
    public var isConfigured: Bool { url != nil && apiKey != nil && apiSecret != nil }
}

extension ConfigLoader {
    /// The `media.livekit.*` keys.
    static let mediaKeys: [Key] = [
        Key(path: "media.livekit.url", expectation: "a ws://, wss://, http:// or https:// URL, or null") {
            config, value in
            switch value {
            case .null: config.media.url = nil
            case .string(let url)
            where ["ws://", "wss://", "http://", "https://"].contains(where: url.hasPrefix) && !url.contains(" "):
                config.media.url = url
            default: return false
            }
            return true
        },
        optionalText("media.livekit.apiKey", \.media.apiKey),
        optionalSecret("media.livekit.apiSecret", \.media.apiSecret, minimumBytes: 32),
        integer("media.livekit.tokenSeconds", \.media.tokenSeconds, 60 ... 86_400),
    ]

    /// The three belong together: one without the others is a mistake, not
    /// a choice.
    static func validateMedia(_ config: ServerConfig, source: String) throws(ConfigError) {
        let set = [config.media.url, config.media.apiKey, config.media.apiSecret].filter { $0 != nil }.count
        guard set == 0 || set == 3 else {
            throw ConfigError(
                "\(source): \"media.livekit.url\", \"media.livekit.apiKey\" and \"media.livekit.apiSecret\" "
                    + "must be set together")
        }
    }
}
