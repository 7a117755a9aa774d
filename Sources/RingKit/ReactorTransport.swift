#if os(Linux)
    import SignalClient

    /// The transport over SignalClient's WebSocket on its epoll I/O loop
    /// (``FrameConnection``): ``RingTransportFactory/default`` on Linux,
    /// where URLSession has no WebSockets. The URL takes the forms
    /// SignalClient's `ServerEndpoint` does (`ws://`, `wss://`, default path `/v1/ws`).
    public struct ReactorTransport: RingTransport {
        public init() {}

        public func open(
            url: String, onEvent: @escaping @Sendable (RingTransportEvent) -> Void
        ) async throws(RingError) -> any RingTransportConnection {
            do throws(ClientError) {
                return try await FrameConnection.open(
                    url: url, onFrame: { onEvent(.text($0)) },
                    onClose: { onEvent(.closed(code: $0.closeCode, reason: $0.message)) })
            } catch {
                throw RingError(code: error.code.rawValue, message: error.message, closeCode: error.closeCode)
            }
        }
    }

    extension FrameConnection: RingTransportConnection {}
#endif
