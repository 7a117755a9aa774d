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
    /// (created if missing). An existing pair is kept unless `replace` is
    /// set (returning false): running it twice is not a mistake. One file
    /// without the other is, and throws.
    public static func write(into directory: String, days: Int, replace: Bool) throws -> (files: Files, written: Bool) {
        let files = Files(
            certificatePath: directory + "/" + certificateName,
            privateKeyPath: directory + "/" + privateKeyName)
        let present = [files.certificatePath, files.privateKeyPath].filter { (path: String) in access(path, F_OK) == 0 }
        if !replace && present.count == 2 { return (files, false) }
        if !replace, let lone = present.first {
            throw ConfigError("\(lone) exists without its pair (pass --force to replace it)")
        }
        let generated = try SelfSignedCertificate.generate(validUntil: days * 24 * 3600)
        try FileSystem.makeDirectories(directory)
        for path in present { unlink(path) }
        try FileSystem.writeNew(files.privateKeyPath, contents: Array(generated.privateKeyPEM.utf8), mode: 0o600)
        try FileSystem.writeNew(files.certificatePath, contents: Array(generated.certificatePEM.utf8), mode: 0o644)
        return (files, true)
    }
}
