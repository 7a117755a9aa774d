import SignalCrypto
import TestSupport

/// A TLS client over a raw ``TestSocket``, driven step by step so tests see
/// exactly what the server sends: records, alerts, close_notify, EOF.
final class TLSTestClient {
    let socket: TestSocket
    let session: TLSSession
    /// Plaintext received and not taken yet.
    var plaintext: [UInt8] = []
    /// Whether close_notify arrived.
    private(set) var sawCloseNotify = false

    init(port: Int, trusting certificate: CertificateFiles) throws {
        socket = try TestSocket(port: port)
        session = try TLSSession(context: try certificate.clientContext(), serverName: "localhost")
    }

    /// Sends what the session has queued, `byteByByte` if asked.
    func flush(byteByByte: Bool = false) throws {
        guard let output = session.takeOutput() else { return }
        if byteByByte { try socket.sendByteByByte(output) } else { try socket.send(output) }
    }

    /// Runs the handshake to completion.
    func handshake(byteByByte: Bool = false, timeout: Double = 5) throws {
        let deadline = monotonicSeconds() + timeout
        while try !session.handshake() {
            try flush(byteByByte: byteByByte)
            guard try receive(until: deadline) else { throw TestSocketError("the server closed during the handshake") }
        }
        try flush()
    }

    /// Encrypts and sends `text`.
    func send(_ text: String) throws {
        try Array(text.utf8).withUnsafeBytes { try session.write($0) }
        try flush()
    }

    /// Reads once from the socket and decrypts what it can; false at EOF.
    @discardableResult
    func receive(until deadline: Double) throws -> Bool {
        let count = try socket.receiveSome(until: deadline)
        guard count > 0 else { return false }
        let bytes = socket.buffer
        socket.buffer = []
        bytes.withUnsafeBytes { session.receive($0) }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            switch try chunk.withUnsafeMutableBytes({ try session.read(into: $0) }) {
            case .plaintext(let count): plaintext += chunk[0 ..< count]
            case .needsInput: return true
            case .closed:
                sawCloseNotify = true
                return true
            }
        }
    }

    /// Reads until the server closes the TCP connection.
    func readUntilEOF(timeout: Double = 5) throws {
        let deadline = monotonicSeconds() + timeout
        while try receive(until: deadline) {}
    }
}
