import Foundation
import SignalProtocol
import TestSupport
import Testing

/// The built ringd in an environment like a Kubernetes pod's: the variables
/// a Service named `ringd` and one named `ringd-cluster` inject do not stop
/// it, while a misspelt key still does.
@Suite("EndToEnd: Kubernetes service links in the environment", .blocking)
struct ServiceLinkEndToEndTests {
    @Test func ringdStartsBesideTheServicesVariablesAndSaysItPassedThemOver() throws {
        let environment = ConfigLoaderTests.serviceLinks.merging(["RINGD_LOG_LEVEL": "debug"]) { a, _ in a }
        try withRingd(environment: environment) { ringd in
            let health = try SignalingIntegration.rest(port: ringd.port, "GET", "/healthz", apiKey: nil)
            #expect(health.status == 200, "\(health)")
            for name in ConfigLoaderTests.serviceLinks.keys.sorted() {
                #expect(ringd.log.contains("ignoring \(name): a Kubernetes service link"), "\(name): \(ringd.log)")
            }
        }
    }

    @Test func aMisspeltKeyStillStopsTheStartAndNamesTheKeyMeant() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let errors = directory.file("stderr")
        let status = try RingdProcess.run(
            ["--ephemeral"],
            environment: ConfigLoaderTests.serviceLinks.merging(["RINGD_LISTN_PORT": "0"]) { a, _ in a },
            directory: directory.path, stderr: .file(errors))
        #expect(status == .exited(1))
        let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(text.contains("RINGD_LISTN_PORT matches no configuration key"), "\(text)")
        #expect(text.contains("did you mean RINGD_LISTEN_PORT?"), "\(text)")
    }
}
