import SignalServer
import Testing

/// `ConfigLoader.load(bytes:source:environment:)`, the entry point the file
/// path uses and the config fuzz target calls.
@Suite struct ConfigLoaderBytesTests {
    @Test func bytesLoadLikeTheFileAndRefusalsNameTheSource() throws {
        let text = #"{"listen": {"port": 9000}, "ws": {"maxMessageBytes": 4096}}"#
        let fromBytes = try ConfigLoader.load(
            bytes: Array(text.utf8), source: "inline.json",
            environment: ["RINGD_THREADS": "2"])
        let fromFile = try loadConfig(text, environment: ["RINGD_THREADS": "2"]).get()
        #expect(fromBytes.port == 9000 && fromFile.port == 9000)
        #expect(fromBytes.maxMessageBytes == 4096 && fromFile.maxMessageBytes == 4096)
        #expect(fromBytes.threads == 2 && fromFile.threads == 2)

        #expect(throws: ConfigError.self) {
            try ConfigLoader.load(bytes: Array("[]".utf8), source: "inline.json", environment: [:])
        }
        let refusal = #expect(throws: ConfigError.self) {
            try ConfigLoader.load(bytes: Array(#"{"colour": 1}"#.utf8), source: "inline.json", environment: [:])
        }
        #expect(refusal?.message == #"inline.json: unknown key "colour""#)
    }
}
