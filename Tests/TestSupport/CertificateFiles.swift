import Foundation
import SignalCrypto

/// A generated certificate and key as PEM files in a fresh directory, which
/// ``remove()`` deletes; ``replace(validFrom:validUntil:)`` writes a new pair
/// in their place, as an operator renewing a certificate would.
public struct CertificateFiles: Sendable {
    public let directory: TemporaryDirectory
    public var certificatePath: String { directory.file("cert.pem") }
    public var privateKeyPath: String { directory.file("key.pem") }
    private let names: [String]

    /// A certificate for localhost, 127.0.0.1 and ::1 unless `names` says
    /// otherwise, valid from `validFrom` to `validUntil` seconds from now.
    public init(
        names: [String] = SelfSignedCertificate.localhostNames, validFrom: Int = -60,
        validUntil: Int = 3600
    ) throws {
        directory = try TemporaryDirectory(prefix: "ringd-tls")
        self.names = names
        try replace(validFrom: validFrom, validUntil: validUntil)
    }

    /// Writes a new certificate and key over the old files.
    public func replace(validFrom: Int = -60, validUntil: Int = 3600) throws {
        let generated = try SelfSignedCertificate.generate(
            subjectAltNames: names, validFrom: validFrom,
            validUntil: validUntil)
        try generated.certificatePEM.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        try generated.privateKeyPEM.write(toFile: privateKeyPath, atomically: true, encoding: .utf8)
    }

    /// Copies the current certificate to `name` in the directory (a CA file
    /// that stays when the certificate is replaced).
    public func keepCertificate(as name: String) throws -> String {
        let path = directory.file(name)
        try FileManager.default.copyItem(atPath: certificatePath, toPath: path)
        return path
    }

    /// Client verification against the current certificate.
    public var trusted: TLSVerification { .caFile(certificatePath) }

    /// A server context serving the current certificate.
    public func serverContext() throws -> TLSContext {
        try TLSContext.server(certificatePath: certificatePath, privateKeyPath: privateKeyPath)
    }

    /// A client context trusting the current certificate.
    public func clientContext() throws -> TLSContext {
        try TLSContext.client(verification: trusted)
    }

    public func remove() { directory.remove() }
}
