import SignalCompression
import SignalCrypto
import SignalProtocol

/// One client WebSocket of the benchmark: a non-blocking socket that goes
/// through connect, the HTTP upgrade and `auth`, then carries text messages.
final class Peer {
    /// Where the connection is in its life.
    enum Phase {
        /// The TCP connect is in progress.
        case connecting
        /// Connected; the TLS handshake is in progress.
        case securing
        /// The upgrade request is sent; the 101 response has not arrived yet.
        case upgrading
        /// The `auth` request is sent; its result has not arrived yet.
        case authenticating
        /// Authenticated: messages go to the loop's `onMessage`.
        case ready
        /// Closed, for the reason recorded in the loop's failures.
        case closed
    }

    let fd: Int32
    /// The peer's position in the loop, which is also its epoll token.
    let index: Int
    let uid: String
    let pair: Int
    let isCaller: Bool
    /// The device id sent in `auth`; nil lets the server assign one.
    let deviceId: String?
    var phase = Phase.connecting
    /// The TLS session, when the loop speaks TLS.
    let tls: TLSSession?
    let handshake: WebSocketClientHandshake
    /// The server's answer to the upgrade, until its head is complete.
    var upgradeResponse: [UInt8] = []
    var reader = WebSocketMessageReader(role: .client, maxMessageBytes: Peer.maxMessageBytes)
    /// Inflates the server's compressed messages, once permessage-deflate is agreed.
    var decompressor: MessageDecompressor?
    /// The largest message the peer accepts.
    static let maxMessageBytes = 1 << 20
    var outbound: [UInt8] = []
    var watchingWrite = true
    /// The live call the auth result reported (a previous run's, or one a
    /// lost connection interrupted), if any.
    var activeCall: Call?

    init(
        fd: Int32, index: Int, uid: String, pair: Int, isCaller: Bool, deviceId: String? = nil, tls: TLSSession?,
        offer: PerMessageDeflateParameters?
    ) {
        (self.fd, self.index, self.uid, self.pair, self.isCaller, self.tls) = (fd, index, uid, pair, isCaller, tls)
        self.deviceId = deviceId
        handshake = WebSocketClientHandshake(offer: offer)
    }
}
