import SignalProtocol
import SignalServer
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    usage: ws-echo [--host HOST] [--port PORT] [--max-message-bytes N] [--threads N]
                   [--compression] [--compression-threshold N] [--context-takeover]

    A WebSocket echo server on ringd's WebSocket layer, for conformance suites:
    every text and binary message is sent back unchanged, on every path.
      --host HOST              listen address (default 127.0.0.1)
      --port PORT              listen port (default 9001; 0 picks a free one)
      --max-message-bytes N    largest message accepted (default 67108864)
      --threads N              event loops (default: one per CPU)
      --compression            accept permessage-deflate offers (RFC 7692)
      --compression-threshold N  compress echoed messages of N bytes or more (default 0: all)
      --context-takeover       keep compression contexts between messages (default: no
                               context takeover both ways, as ringd's default)
    """

/// Echoes every message back on the connection it came from.
final class EchoResponder: WebSocketResponder {
    func webSocketDidOpen(_ socket: WebSocket) {}
    func webSocket(_ socket: WebSocket, didReceive message: WebSocketMessage) { socket.send(message) }
    func webSocketDidClose(_ socket: WebSocket, code: WebSocketCloseCode) {}
}

/// Routes every path to the echo responder.
final class EchoRouter: HTTPRouter {
    func route(_ request: HTTPRequest, from _: SocketAddress) -> HTTPRoute { .webSocket(EchoResponder()) }
}

/// The echo server as an application: nothing to do around shutdown.
struct EchoApplication: ServerApplication {
    func makeRouter(_ context: ServerContext) -> HTTPRouter { EchoRouter() }
    func stop() {}
    func close() {}
}

var config = ServerConfig()
config.port = 9001
config.maxMessageBytes = 64 * 1024 * 1024
config.outboundHardLimit = 256 * 1024 * 1024
config.compressionThresholdBytes = 0
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--compression":
        config.compression = true
        continue
    case "--context-takeover":
        config.compressionContextTakeover = true
        continue
    default:
        break
    }
    let value = arguments.popFirst()
    switch (argument, value) {
    case ("--host", let host?):
        config.host = host
    case ("--port", let text?):
        guard let port = Int(text), (0 ... 65535).contains(port) else {
            Daemon.printError("ws-echo: --port needs a number from 0 to 65535")
            exit(2)
        }
        config.port = port
    case ("--max-message-bytes", let text?):
        guard let bytes = Int(text), bytes >= 125 else {
            Daemon.printError("ws-echo: --max-message-bytes needs a number of at least 125")
            exit(2)
        }
        config.maxMessageBytes = bytes
    case ("--compression-threshold", let text?):
        guard let bytes = Int(text), bytes >= 0 else {
            Daemon.printError("ws-echo: --compression-threshold needs a number of bytes")
            exit(2)
        }
        config.compressionThresholdBytes = bytes
    case ("--threads", let text?):
        guard let threads = Int(text), threads >= 0 else {
            Daemon.printError("ws-echo: --threads needs a number")
            exit(2)
        }
        config.threads = threads
    case ("--help", _), ("-h", _):
        print(usage)
        exit(0)
    default:
        Daemon.printError("ws-echo: bad argument \"\(argument)\"\n\n\(usage)")
        exit(2)
    }
}
exit(Daemon.run(config: config, program: "ws-echo") { EchoApplication() })
