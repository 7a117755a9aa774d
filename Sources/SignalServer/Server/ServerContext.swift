import SignalReactor

/// What a router is given when the server creates it on a loop.
public struct ServerContext {
    /// The loop the router serves.
    public let loop: EventLoop
    public let config: ServerConfig
    public let stats: ServerStats
}
