import Foundation
import SignalCrypto

/// A generated certificate and key as PEM files in a fresh directory, which
/// ``remove()`` deletes; ``replace(validFrom:validUntil:)`` writes a new pair
/// in their place, as an operator renewing a certificate would.
struct CertificateFiles {
    let directory: String
    var certificatePath: String { directory + "/cert.pem" }
    var privateKeyPath: String { directory + "/key.pem" }

    init(validFrom: Int = -60, validUntil: Int = 3600) throws {
        directory = "/tmp/ringd-client-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try replace(validFrom: validFrom, validUntil: validUntil)
    }

    /// Writes a new certificate and key over the old files.
    func replace(validFrom: Int = -60, validUntil: Int = 3600) throws {
        let generated = try SelfSignedCertificate.generate(validFrom: validFrom, validUntil: validUntil)
        try generated.certificatePEM.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        try generated.privateKeyPEM.write(toFile: privateKeyPath, atomically: true, encoding: .utf8)
    }

    /// Copies the current certificate to `name` in the directory (a CA file
    /// that stays when the certificate is replaced).
    func keepCertificate(as name: String) throws -> String {
        let path = directory + "/" + name
        try FileManager.default.copyItem(atPath: certificatePath, toPath: path)
        return path
    }

    /// Client verification against the current certificate.
    var trusted: TLSVerification { .caFile(certificatePath) }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
