/// What a router is given when the server creates it on a loop.
public struct ServerContext {
    /// The loop the router serves.
    public let loop: EventLoop
    /// The server's configuration.
    public let config: ServerConfig
    /// The server's counters.
    public let stats: ServerStats
}
