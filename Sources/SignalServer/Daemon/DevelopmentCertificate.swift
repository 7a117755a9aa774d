import SignalCrypto
#if canImport(Glibc)
import Glibc
#endif

/// `ringd gen-cert`: a self-signed certificate and key for localhost
/// (127.0.0.1 and ::1 included), written into the data directory for
/// development and tests over `wss://`.
public enum DevelopmentCertificate {
    /// The certificate's file name in the directory.
    public static let certificateName = "tls-cert.pem"
    /// The private key's file name in the directory (mode 0600).
    public static let privateKeyName = "tls-key.pem"

    /// Where the files were written.
    public struct Files: Sendable {
        /// The certificate (also what clients pass as their CA file).
        public let certificatePath: String
        public let privateKeyPath: String
    }

    /// Generates the pair valid for `days` and writes it into `directory`
    /// (created if missing). Existing files are kept unless `replace` is set.
    public static func write(into directory: String, days: Int, replace: Bool) throws -> Files {
        let files = Files(certificatePath: directory + "/" + certificateName,
                          privateKeyPath: directory + "/" + privateKeyName)
        let generated = try SelfSignedCertificate.generate(validUntil: days * 24 * 3600)
        try FileSystem.makeDirectories(directory)
        for path in [files.certificatePath, files.privateKeyPath] where access(path, F_OK) == 0 {
            guard replace else { throw ConfigError("\(path) exists (pass --force to replace it)") }
            unlink(path)
        }
        try FileSystem.writeNew(files.privateKeyPath, contents: Array(generated.privateKeyPEM.utf8), mode: 0o600)
        try FileSystem.writeNew(files.certificatePath, contents: Array(generated.certificatePEM.utf8), mode: 0o644)
        return files
    }
}
