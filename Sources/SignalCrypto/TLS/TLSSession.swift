import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// One TLS connection over memory buffers: the owner moves ciphertext between
/// the socket and the session (``receive(_:)``, ``takeOutput()``), and
/// plaintext in and out (``read(into:)``, ``write(_:)``). The session never
/// touches a descriptor, so it fits a non-blocking event loop and a blocking
/// client alike.
///
/// Not Sendable: one thread uses a session at a time.
public final class TLSSession {
    /// What a ``read(into:)`` produced.
    public enum ReadResult: Equatable {
        /// This many plaintext bytes are at the start of the buffer.
        case plaintext(Int)
        /// Nothing more until more ciphertext arrives (also mid-handshake).
        case needsInput
        /// The peer sent close_notify: its side is finished.
        case closed
    }

    private let ssl: OpaquePointer
    /// Ciphertext from the peer, which OpenSSL reads (owned by `ssl`).
    private var input: OpaquePointer
    /// Ciphertext for the peer, which OpenSSL writes (owned by `ssl`).
    private var output: OpaquePointer

    /// A drained memory buffer holding more than this is replaced by an
    /// empty one, so an idle connection does not keep its largest flight
    /// (the handshake's certificate chain, a big message) allocated.
    public static let idleBufferLimit = 1024
    private let context: TLSContext
    private let isServer: Bool

    /// A session on `context`. A client names the server it expects in
    /// `serverName` (a host name or an IP address): it is checked against
    /// the certificate unless verification is off, and host names go out as SNI.
    public init(context: TLSContext, serverName: String? = nil) throws(TLSError) {
        ERR_clear_error()
        guard let ssl = SSL_new(context.pointer) else {
            throw TLSError.fromQueue(TLSError.configurationCode, "cannot create a TLS session")
        }
        guard let input = Self.memoryBuffer(), let output = Self.memoryBuffer() else {
            SSL_free(ssl)
            throw TLSError.fromQueue(TLSError.configurationCode, "cannot create TLS buffers")
        }
        SSL_set_bio(ssl, input, output)
        self.ssl = ssl
        self.input = input
        self.output = output
        self.context = context
        isServer = context.isServer
        if isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            _ = ringd_ssl_offer_http11(ssl)
            if let serverName { try expect(serverName) }
        }
    }

    deinit { SSL_free(ssl) }

    /// An empty memory BIO whose emptiness means "wait for more", not end of file.
    private static func memoryBuffer() -> OpaquePointer? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        BIO_ctrl(bio, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        return bio
    }

    /// The bytes the session's two ciphertext buffers hold allocated.
    public var bufferCapacity: Int { ringd_bio_mem_capacity(input) + ringd_bio_mem_capacity(output) }

    /// Replaces drained buffers that grew beyond ``idleBufferLimit``.
    private func releaseDrainedBuffers() {
        if BIO_ctrl_pending(input) == 0, ringd_bio_mem_capacity(input) > Self.idleBufferLimit,
            let fresh = Self.memoryBuffer()
        {
            SSL_set0_rbio(ssl, fresh)
            input = fresh
        }
        if BIO_ctrl_pending(output) == 0, ringd_bio_mem_capacity(output) > Self.idleBufferLimit,
            let fresh = Self.memoryBuffer()
        {
            SSL_set0_wbio(ssl, fresh)
            output = fresh
        }
    }

    private func expect(_ serverName: String) throws(TLSError) {
        let param = SSL_get0_param(ssl)
        if Self.isIPAddress(serverName) {
            guard X509_VERIFY_PARAM_set1_ip_asc(param, serverName) == 1 else {
                throw TLSError.fromQueue(TLSError.configurationCode, "cannot check the certificate for \(serverName)")
            }
        } else {
            guard SSL_set1_host(ssl, serverName) == 1, ringd_ssl_set_server_name(ssl, serverName) == 1 else {
                throw TLSError.fromQueue(TLSError.configurationCode, "cannot check the certificate for \(serverName)")
            }
        }
    }

    private static func isIPAddress(_ text: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, text, &buffer) == 1 || inet_pton(AF_INET6, text, &buffer) == 1
    }

    public var isHandshakeComplete: Bool { SSL_is_init_finished(ssl) == 1 }

    /// The negotiated version, e.g. `TLSv1.3`.
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The ALPN protocol agreed on, if any.
    public var applicationProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// Hands ciphertext from the peer to the session.
    public func receive(_ ciphertext: UnsafeRawBufferPointer) {
        guard let base = ciphertext.baseAddress, !ciphertext.isEmpty else { return }
        // A memory buffer grows to take everything.
        _ = BIO_write(input, base, Int32(ciphertext.count))
    }

    /// Advances the handshake; true once it is complete. Output to send may
    /// be waiting in ``takeOutput()`` either way.
    public func handshake() throws(TLSError) -> Bool {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return true }
        try check(result, during: "handshake")
        return false
    }

    /// Decrypts the next plaintext into `buffer` (at most its size), driving
    /// the handshake first if it is not complete.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> ReadResult {
        ERR_clear_error()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        if count > 0 { return .plaintext(Int(count)) }
        if SSL_get_error(ssl, count) == SSL_ERROR_ZERO_RETURN { return .closed }
        try check(count, during: isHandshakeComplete ? "read" : "handshake")
        releaseDrainedBuffers()
        return .needsInput
    }

    /// Encrypts all of `plaintext` as records in ``takeOutput()``. Throws
    /// when the session cannot write (the handshake is not complete, or it failed).
    public func write(_ plaintext: UnsafeRawBufferPointer) throws(TLSError) {
        guard let base = plaintext.baseAddress, !plaintext.isEmpty else { return }
        ERR_clear_error()
        let count = SSL_write(ssl, base, Int32(plaintext.count))
        guard count == plaintext.count else {
            try check(count, during: "write")
            throw TLSError(code: TLSError.protocolCode, message: "cannot write before the TLS handshake is complete")
        }
    }

    /// Queues close_notify, telling the peer no more data follows.
    public func close() {
        ERR_clear_error()
        guard isHandshakeComplete else { return }
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// Ciphertext waiting to be sent, taken out of the session; nil when none.
    public func takeOutput() -> [UInt8]? {
        let pending = Int(BIO_ctrl_pending(output))
        guard pending > 0 else { return nil }
        let bytes = [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
            count = Int(max(0, BIO_read(output, buffer.baseAddress, Int32(pending))))
        }
        releaseDrainedBuffers()
        return bytes
    }

    /// Turns a non-positive OpenSSL result into nothing (it only wants more
    /// input) or an error that says why.
    private func check(_ result: Int32, during step: String) throws(TLSError) {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return
        case SSL_ERROR_ZERO_RETURN:
            throw TLSError(code: TLSError.protocolCode, message: "the peer closed the TLS session")
        default:
            // Without verification OpenSSL still records what it found, which
            // then says nothing about why the handshake failed.
            let verify = SSL_get_verify_result(ssl)
            if !isServer, SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER != 0, verify != X509_V_OK {
                ERR_clear_error()
                let reason = String(cString: X509_verify_cert_error_string(verify))
                throw TLSError(
                    code: TLSError.verificationCode, message: "the server's certificate did not verify: \(reason)")
            }
            let code = step == "handshake" ? TLSError.handshakeCode : TLSError.protocolCode
            throw TLSError.fromQueue(code, "TLS \(step) failed")
        }
    }
}
