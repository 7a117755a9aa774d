import COpenSSL
import SignalSystem

/// The oldest TLS version a context accepts.
public enum TLSVersion: String, Sendable, CaseIterable {
    /// TLS 1.2 (RFC 5246), the default floor.
    case tls12 = "1.2"
    /// TLS 1.3 (RFC 8446).
    case tls13 = "1.3"

    var openSSLValue: Int32 {
        switch self {
        case .tls12: TLS1_2_VERSION
        case .tls13: TLS1_3_VERSION
        }
    }
}

/// How a client checks the server's certificate.
public enum TLSVerification: Sendable, Hashable {
    /// Against the system's trusted roots.
    case systemRoots
    /// Against the certificates in a PEM file (a private CA, or a
    /// self-signed certificate itself).
    case caFile(String)
    /// Not at all: for a throwaway development certificate only.
    case none
}

/// A configured OpenSSL `SSL_CTX`: certificates, verification and protocol
/// limits, from which each connection's ``TLSSession`` is made.
///
/// Sendable: OpenSSL allows creating sessions from one context on many
/// threads once it is configured, and nothing changes it after `init`
/// (a reload makes a new context).
public final class TLSContext: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Whether sessions are the server side.
    public let isServer: Bool

    private init(server: Bool) throws(TLSError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
            throw TLSError.fromQueue(TLSError.configurationCode, "cannot create a TLS context")
        }
        pointer = context
        isServer = server
        ringd_ssl_ctx_harden(context)
    }

    deinit { SSL_CTX_free(pointer) }

    /// A server context serving the PEM certificate chain at `certificatePath`
    /// with the PEM private key at `privateKeyPath`, speaking at least
    /// `minimumVersion` and selecting ALPN `http/1.1`. Errors name the file.
    public static func server(
        certificatePath: String, privateKeyPath: String,
        minimumVersion: TLSVersion = .tls12
    ) throws(TLSError) -> TLSContext {
        let context = try TLSContext(server: true)
        try context.setMinimumVersion(minimumVersion)
        try readable(certificatePath, what: "certificate")
        try readable(privateKeyPath, what: "private key")
        guard SSL_CTX_use_certificate_chain_file(context.pointer, certificatePath) == 1 else {
            throw TLSError.fromQueue(TLSError.configurationCode, "\(certificatePath): not a usable PEM certificate")
        }
        guard SSL_CTX_use_PrivateKey_file(context.pointer, privateKeyPath, SSL_FILETYPE_PEM) == 1,
            SSL_CTX_check_private_key(context.pointer) == 1
        else {
            let reasons = TLSError.drainQueue()
            let problem =
                reasons.contains("key values mismatch")
                ? "the private key does not match the certificate \(certificatePath)"
                : (["not a usable PEM private key"] + reasons).joined(separator: ": ")
            throw TLSError(code: TLSError.configurationCode, message: "\(privateKeyPath): \(problem)")
        }
        ringd_ssl_ctx_select_http11(context.pointer)
        return context
    }

    /// A client context verifying servers as `verification` says, speaking at
    /// least `minimumVersion` and offering ALPN `http/1.1`.
    public static func client(
        verification: TLSVerification,
        minimumVersion: TLSVersion = .tls12
    ) throws(TLSError) -> TLSContext {
        let context = try TLSContext(server: false)
        try context.setMinimumVersion(minimumVersion)
        switch verification {
        case .systemRoots:
            guard SSL_CTX_set_default_verify_paths(context.pointer) == 1 else {
                throw TLSError.fromQueue(TLSError.configurationCode, "cannot load the system's trusted certificates")
            }
            SSL_CTX_set_verify(context.pointer, SSL_VERIFY_PEER, nil)
        case .caFile(let path):
            try readable(path, what: "CA file")
            guard SSL_CTX_load_verify_locations(context.pointer, path, nil) == 1 else {
                throw TLSError.fromQueue(
                    TLSError.configurationCode, "\(path): no usable PEM certificate in the CA file")
            }
            SSL_CTX_set_verify(context.pointer, SSL_VERIFY_PEER, nil)
        case .none:
            SSL_CTX_set_verify(context.pointer, SSL_VERIFY_NONE, nil)
        }
        return context
    }

    private func setMinimumVersion(_ version: TLSVersion) throws(TLSError) {
        guard ringd_ssl_ctx_set_min_proto_version(pointer, version.openSSLValue) == 1 else {
            throw TLSError.fromQueue(TLSError.configurationCode, "cannot require TLS \(version.rawValue)")
        }
    }

    /// Fails with a message naming `path` when it cannot be read, before
    /// OpenSSL's less direct reasons.
    private static func readable(_ path: String, what: String) throws(TLSError) {
        guard let bytes = FileContents.read(path) else {
            throw TLSError(code: TLSError.configurationCode, message: "\(path): cannot read the \(what)")
        }
        guard !bytes.isEmpty else {
            throw TLSError(code: TLSError.configurationCode, message: "\(path): the \(what) file is empty")
        }
    }
}
