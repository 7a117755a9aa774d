/// Which devices with a push token a new call pushes (`push.mode`).
public enum PushMode: String, Sendable, CaseIterable {
    /// Those with no live connection: a connected device hears the call on
    /// its WebSocket.
    case offline
    /// Every one, connected or not (an app that rings through CallKit even
    /// in the foreground).
    case all
}

/// APNs token-based authentication and where to send (`push.apns.*`).
public struct APNsSettings: Sendable {
    /// The `.p8` signing key from the Apple developer account.
    public var keyFile: String?
    /// The key's 10-character id (the JWT's `kid`).
    public var keyId: String?
    /// The developer team's 10-character id (the JWT's `iss`).
    public var teamId: String?
    /// The app's bundle id, for tokens registered without a `topic`.
    public var bundleId: String?
    /// Where production tokens go; tests point it at a local server.
    public var productionURL = "https://api.push.apple.com"
    /// Where sandbox (development build) tokens go.
    public var sandboxURL = "https://api.sandbox.push.apple.com"

    public init() {}

    /// Whether the three credentials are set.
    public var isConfigured: Bool { keyFile != nil && keyId != nil && teamId != nil }
}

/// FCM HTTP v1 with a service account (`push.fcm.*`).
public struct FCMSettings: Sendable {
    /// The service account's JSON key file (`project_id`, `client_email`,
    /// `private_key`, `token_uri`).
    public var serviceAccountFile: String?
    /// Where `messages:send` goes; tests point it at a local server.
    public var baseURL = "https://fcm.googleapis.com"
    /// Replaces the key file's `token_uri` (tests).
    public var tokenURL: String?

    public init() {}

    public var isConfigured: Bool { serviceAccountFile != nil }
}

/// VoIP push (`push.*`): see docs/PUSH.md.
public struct PushSettings: Sendable {
    public var mode = PushMode.offline
    public var apns = APNsSettings()
    public var fcm = FCMSettings()
    /// Seconds one request may take, connecting included (`push.timeoutSeconds`).
    public var timeout = 10.0
    /// Seconds before each retry of a push that got 429, 5xx or no answer,
    /// the last repeating (`push.retrySeconds`); stretched by up to a fifth
    /// at random. No retry leaves once the call stops ringing.
    public var retrySeconds: [Double] = [1, 2, 4, 8]
    /// A PEM file of CA certificates to verify APNs, FCM and the OAuth
    /// endpoint with instead of the system's (`push.caFile`).
    public var caFile: String?
    /// Tokens one user keeps at most (`push.maxTokensPerUser`); registering
    /// one more drops the one registered longest ago.
    public var maxTokensPerUser = 10
    /// Connections to one push service host at most
    /// (`push.connectionsPerHost`), each carrying up to the service's
    /// stream limit (APNs: 1,000) of pushes at once.
    public var connectionsPerHost = 4
    /// Whether a callee's devices that were pushed the ring get a visible
    /// "Missed call" notification when the call ends unanswered or
    /// cancelled (`push.missedCallAlerts`).
    public var missedCallAlerts = true
    /// Whether a call's `metadata.callerName`, which the caller writes,
    /// names the caller in pushes (`push.trustCallerMetadata`). Off, only
    /// what the server knows of the caller does: anyone could ring as
    /// "Your Bank" otherwise.
    public var trustCallerMetadata = false

    public init() {}

    /// Whether any push service is configured.
    public var isEnabled: Bool { apns.isConfigured || fcm.isConfigured }

    /// The wait before retry number `retry` (from 1), before jitter.
    func retryDelay(_ retry: Int) -> Double {
        guard let last = retrySeconds.last else { return 1 }
        return retry - 1 < retrySeconds.count ? retrySeconds[max(0, retry - 1)] : last
    }
}
