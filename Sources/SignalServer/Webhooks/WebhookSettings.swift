import SignalProtocol

/// One receiver of webhooks (`webhooks.endpoints[]`).
public struct WebhookEndpoint: Sendable {
    /// Where events are POSTed (http or https); endpoints are told apart by it.
    public var url: String
    /// Its `whsec_…` secrets, each signing every request (more than one
    /// while rotating); they never print.
    public var signature: WebhookSignature
    /// The triggers it wants; nil: all of them.
    public var events: Set<WebhookTrigger>?
    public var enabled: Bool

    public init(url: String, signature: WebhookSignature, events: Set<WebhookTrigger>? = nil, enabled: Bool = true) {
        self.url = url
        self.signature = signature
        self.events = events
        self.enabled = enabled
    }

    /// Whether it wants events of `trigger`.
    func wants(_ trigger: WebhookTrigger) -> Bool { enabled && (events?.contains(trigger) ?? true) }
}

/// Where webhooks go and how they are delivered (`webhooks.*`).
public struct WebhookSettings: Sendable {
    public var endpoints: [WebhookEndpoint] = []
    /// Seconds one attempt may take, connecting included (`webhooks.timeoutSeconds`).
    public var timeout = 10.0
    /// Attempts before an event is marked failed (`webhooks.maxAttempts`):
    /// with the schedule below, the last is about 24 h after the first.
    public var maxAttempts = 28
    /// Events of one endpoint in flight at once (`webhooks.concurrency`);
    /// events of one call are always sent one after the other.
    public var concurrency = 4
    /// Seconds to wait before each retry, the last repeating
    /// (`webhooks.retrySeconds`): 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then
    /// hourly. Each wait is stretched by up to a fifth at random, so that
    /// failures do not come back in step.
    public var retrySeconds: [Double] = [5, 30, 120, 600, 1800, 3600]
    /// Pending events held in memory at most (`webhooks.maxEventsInMemory`);
    /// the rest wait in the store and are read back as memory drains.
    public var maxEventsInMemory = 20_000
    /// Hours delivered and failed events are kept before they are deleted
    /// (`webhooks.retentionHours`).
    public var retentionHours = 72.0
    /// A PEM file of CA certificates to verify https endpoints with instead
    /// of the system's (`webhooks.caFile`), for a private CA.
    public var caFile: String?

    public init() {}

    /// The wait before attempt `attempt + 1` after `attempt` failed (1-based), before jitter.
    func retryDelay(after attempt: Int) -> Double {
        guard let last = retrySeconds.last else { return 0 }
        return attempt - 1 < retrySeconds.count ? retrySeconds[max(0, attempt - 1)] : last
    }

    /// Parses `webhooks.endpoints`: a list of `{"url", "secrets", "events",
    /// "enabled"}`; the failure names the endpoint (from 1) and what is
    /// wrong with it, never a secret.
    static func endpoints(from value: JSONValue) -> Result<[WebhookEndpoint], ConfigError> {
        guard case .array(let items) = value else { return .failure(ConfigError("it is not a list")) }
        var endpoints: [WebhookEndpoint] = []
        for (index, item) in items.enumerated() {
            func refuse(_ reason: String) -> Result<[WebhookEndpoint], ConfigError> {
                .failure(ConfigError("endpoint \(index + 1): \(reason)"))
            }
            guard item.objectMembers != nil else { return refuse("not an object") }
            guard let url = item["url"]?.stringValue, url.hasPrefix("http://") || url.hasPrefix("https://") else {
                return refuse("url must be an http:// or https:// URL")
            }
            guard !endpoints.contains(where: { $0.url == url }) else {
                return refuse("\(redactedURL(url)) is configured twice")
            }
            guard case .array(let secretValues)? = item["secrets"], !secretValues.isEmpty else {
                return refuse("secrets must be a non-empty list")
            }
            let secrets = secretValues.compactMap(\.stringValue)
            guard secrets.count == secretValues.count else { return refuse("every secret must be a string") }
            let signature: WebhookSignature
            do throws(WebhookError) {
                signature = try WebhookSignature(secrets: secrets)
            } catch {
                return refuse(error.message)
            }
            var events: Set<WebhookTrigger>?
            switch item["events"] {
            case nil, .null?: events = nil
            case .array(let names)?:
                let triggers = names.compactMap { $0.stringValue.flatMap(WebhookTrigger.init(rawValue:)) }
                guard triggers.count == names.count else {
                    return refuse(
                        "events must name triggers: \(WebhookTrigger.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                events = Set(triggers)
            default: return refuse("events must be a list of triggers, or null")
            }
            var enabled = true
            switch item["enabled"] {
            case nil, .null?: break
            case .bool(let flag)?: enabled = flag
            default: return refuse("enabled must be true or false")
            }
            endpoints.append(WebhookEndpoint(url: url, signature: signature, events: events, enabled: enabled))
        }
        return .success(endpoints)
    }
}
