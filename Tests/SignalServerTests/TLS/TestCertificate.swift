import Foundation
import SignalCrypto

/// A generated certificate and key written as PEM files into a fresh
/// temporary directory, removed by ``remove()``.
struct TestCertificate {
    let directory: StoreTestDirectory
    let certificatePath: String
    let privateKeyPath: String

    /// A certificate for localhost (and 127.0.0.1, ::1) unless told otherwise.
    init(names: [String] = SelfSignedCertificate.localhostNames, validFrom: Int = -60,
         validUntil: Int = 3600) throws {
        let generated = try SelfSignedCertificate.generate(subjectAltNames: names, validFrom: validFrom,
                                                           validUntil: validUntil)
        directory = try StoreTestDirectory()
        certificatePath = directory.path + "/cert.pem"
        privateKeyPath = directory.path + "/key.pem"
        try generated.certificatePEM.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        try generated.privateKeyPEM.write(toFile: privateKeyPath, atomically: true, encoding: .utf8)
    }

    /// A server context serving this certificate.
    func serverContext() throws -> TLSContext {
        try TLSContext.server(certificatePath: certificatePath, privateKeyPath: privateKeyPath)
    }

    /// A client context trusting this certificate.
    func clientContext() throws -> TLSContext {
        try TLSContext.client(verification: .caFile(certificatePath))
    }

    func remove() { directory.remove() }
}
