import SignalProtocol

/// Where the calls live (`store.backend`).
public enum StoreBackend: String, Sendable {
    /// The embedded SQLite store of one node (`store.path`).
    case sqlite
    /// A PostgreSQL database shared by every node of a cluster (`store.url`).
    case postgres
}

/// Cluster mode (`store.backend: postgres`, docs/CLUSTER.md): the database,
/// and how long a node that stopped renewing its lease counts as alive.
public struct ClusterSettings: Sendable {
    public var backend = StoreBackend.sqlite
    /// A libpq connection string or `postgresql://` URL (`store.url`).
    public var url: String?
    /// A node renews its lease every third of this; another node treats it
    /// as dead once it is this old (`cluster.leaseSeconds`). Shorter finds
    /// a dead node sooner and costs a write per node more often.
    public var leaseSeconds = 10.0
    /// Worker threads, each with a connection of its own, that run the
    /// node's transactions side by side (`cluster.workers`); one user's
    /// inputs always go to the same one, so they keep their order.
    public var workers = 4
    /// Inputs queued on the node's workers at most before requests and
    /// connects are refused for a while (`cluster.maxQueuedInputs`); a
    /// disconnect or a timer is queued whatever the depth.
    public var maxQueuedInputs = 10_000

    public init() {}

    public var isEnabled: Bool { backend == .postgres }
}

extension ConfigLoader {
    /// `store.backend`, `store.url` and `cluster.*`.
    static let clusterKeys: [Key] = [
        Key(path: "store.backend", expectation: "sqlite or postgres") { config, value in
            guard let backend = value.stringValue.flatMap(StoreBackend.init(rawValue:)) else { return false }
            config.cluster.backend = backend
            return true
        },
        // Secret: a URL may carry the password.
        Key(path: "store.url", expectation: "a libpq connection string or postgresql:// URL, or null", isSecret: true) {
            config, value in
            switch value {
            case .null: config.cluster.url = nil
            case .string(let url) where !url.isEmpty: config.cluster.url = url
            default: return false
            }
            return true
        },
        seconds("cluster.leaseSeconds", \.cluster.leaseSeconds, 1 ... 300),
        integer("cluster.workers", \.cluster.workers, 1 ... 64),
        integer("cluster.maxQueuedInputs", \.cluster.maxQueuedInputs, 1 ... 1_000_000),
    ]

    /// What cluster mode needs, and what it does not carry yet.
    static func validateCluster(_ config: ServerConfig, source: String) throws(ConfigError) {
        guard config.cluster.isEnabled else { return }
        guard config.cluster.url != nil else {
            throw ConfigError("\(source): \"store.backend\" postgres needs \"store.url\" (a libpq connection string)")
        }
        if config.testing.enabled {
            throw ConfigError(
                "\(source): \"testing.enabled\" drives one node's clock; it cannot run with \"store.backend\" postgres")
        }
    }
}
