import SignalSystem
import TestSupport
import Testing

@testable import SignalServer

/// Which configured addresses inherited sockets replace, and what each serves.
@Suite struct ListenTargetTests {
    static func inherited(_ names: String...) throws -> InheritedSockets {
        let address = try SocketAddress.resolve(host: "127.0.0.1", port: 9000)
        return InheritedSockets(
            sockets: names.enumerated().map {
                InheritedSocket(descriptor: 3 + Int32($0.offset), name: $0.element, address: address)
            })
    }

    /// Each target as `bind PORT` or `fd N`, with ` tls` when it serves TLS.
    static func describe(_ targets: [(ListenTarget, TLSCertificates?)]) -> [String] {
        targets.map { target, certificates in
            let what =
                switch target {
                case .address(let address): "bind \(address.port)"
                case .inherited(let socket): "fd \(socket.descriptor)"
                }
            return what + (certificates == nil ? "" : " tls")
        }
    }

    static func targets(
        _ inherited: InheritedSockets, tls certificate: CertificateFiles? = nil,
        tlsPort: Int? = nil
    ) throws -> [String] {
        var config = testConfig { $0.port = 8787 }
        config.tlsPort = tlsPort
        let certificates = try certificate.map {
            try TLSCertificates(
                certificatePath: $0.certificatePath, privateKeyPath: $0.privateKeyPath,
                minimumVersion: .tls12)
        }
        return describe(try Server.listenTargets(config: config, certificates: certificates, inherited: inherited))
    }

    @Test func withoutInheritedSocketsTheConfiguredAddressesAreBound() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        #expect(try Self.targets(.none) == ["bind 8787"])
        #expect(try Self.targets(.none, tls: certificate) == ["bind 8787 tls"])
        #expect(try Self.targets(.none, tls: certificate, tlsPort: 8443) == ["bind 8787", "bind 8443 tls"])
    }

    @Test func aSocketNamedTLSReplacesTLSPortAndAnyOtherReplacesListen() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        #expect(try Self.targets(Self.inherited("ringd.socket")) == ["fd 3"])
        #expect(try Self.targets(Self.inherited("web", "web6")) == ["fd 3", "fd 4"])
        #expect(try Self.targets(Self.inherited("web"), tls: certificate, tlsPort: 8443) == ["fd 3", "bind 8443 tls"])
        #expect(try Self.targets(Self.inherited("tls"), tls: certificate, tlsPort: 8443) == ["bind 8787", "fd 3 tls"])
        #expect(
            try Self.targets(Self.inherited("tls", "web"), tls: certificate, tlsPort: 8443) == ["fd 4", "fd 3 tls"])
    }

    @Test func withTLSAloneEveryInheritedSocketServesTLS() throws {
        let certificate = try CertificateFiles()
        defer { certificate.remove() }
        #expect(try Self.targets(Self.inherited("web", "tls"), tls: certificate) == ["fd 3 tls", "fd 4 tls"])
    }

    @Test func aSocketNamedTLSWithoutACertificateIsAnError() throws {
        #expect {
            try Self.targets(Self.inherited("web", "tls"))
        } throws: { error in
            "\(error)"
                == "inherited socket fd 4 \"tls\" (127.0.0.1:9000) is named tls but no TLS certificate is configured (tls.certificate)"
        }
    }
}
