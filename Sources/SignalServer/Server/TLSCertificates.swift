import SignalCrypto
import Synchronization

/// The server's TLS certificate and key, loaded from the configured PEM
/// files, and reloadable (SIGHUP) without touching live connections: each
/// connection keeps the context it started with.
public final class TLSCertificates: Sendable {
    /// The PEM certificate chain (`tls.certificate`).
    public let certificatePath: String
    /// The PEM private key (`tls.privateKey`).
    public let privateKeyPath: String
    private let minimumVersion: TLSVersion
    private let current: Mutex<TLSContext>

    /// Loads the files; the error names the file that is missing or bad.
    public init(certificatePath: String, privateKeyPath: String, minimumVersion: TLSVersion) throws(TLSError) {
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
        self.minimumVersion = minimumVersion
        current = Mutex(
            try TLSContext.server(
                certificatePath: certificatePath, privateKeyPath: privateKeyPath,
                minimumVersion: minimumVersion))
    }

    /// Loads the files again; new connections use them from now on. On an
    /// error the previous certificate stays in use.
    public func reload() throws(TLSError) {
        let context = try TLSContext.server(
            certificatePath: certificatePath, privateKeyPath: privateKeyPath,
            minimumVersion: minimumVersion)
        current.withLock { $0 = context }
    }

    /// A server session for a new connection, on the current certificate.
    func makeSession() throws(TLSError) -> TLSSession {
        let context = current.withLock { $0 }
        return try TLSSession(context: context)
    }
}
