import FuzzSupport
import SignalServer

// Input: the bytes of a configuration file. A refusal names the file and
// never echoes a secret; a configuration that loads meets the rules the
// loader validates.

let source = "fuzz.json"
let secretKeys = ["\"auth.authKeys\"", "\"auth.apiKeys\"", "\"auth.tokenSecret\""]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let config: ServerConfig
    do {
        config = try ConfigLoader.load(bytes: inputBytes(data, size), source: source, environment: [:])
    } catch {
        // `fuzz.json: …`, or `fuzz.json:LINE:COLUMN: …` for invalid JSON.
        require(error.message.hasPrefix("\(source):"), "the message does not name the file: \(error)")
        if secretKeys.contains(where: { error.message.hasPrefix("\(source): \($0) must") }) {
            require(!error.message.contains(", got"), "a secret was echoed: \(error)")
        }
        return 0
    }
    require((0 ... 65535).contains(config.port), "port \(config.port)")
    require(config.pingTimeout > config.pingInterval, "ping timeout not above the interval")
    require(config.outboundHardLimit > config.outboundSoftLimit, "hard limit not above the soft one")
    require((config.tlsCertificatePath == nil) == (config.tlsPrivateKeyPath == nil), "half a TLS identity")
    require(config.tlsPort == nil || config.servesTLS, "a TLS port without TLS")
    require((125 ... 64 * 1024 * 1024).contains(config.maxMessageBytes), "maxMessageBytes \(config.maxMessageBytes)")
    return 0
}
