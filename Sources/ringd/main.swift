#if canImport(Glibc)
import Glibc
#endif
import SignalServer

let usage = """
usage: ringd [--config PATH]

Runs the ringing signaling server in the foreground until SIGINT or SIGTERM.
  --config PATH   configuration file (default: config.json)
  --version       print the version and exit
  --help          show this help

Every configuration key can be overridden by an environment variable:
RINGD_ plus the key in upper snake case, e.g. RINGD_LISTEN_PORT=0.
Once listening, ringd prints one line on stdout: listening ws://HOST:PORT
"""

var configPath = "config.json"
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--config":
        guard let path = arguments.popFirst() else {
            Daemon.printError("ringd: --config needs a path\n\n\(usage)")
            exit(2)
        }
        configPath = path
    case "--version":
        print("ringd \(RingdVersion.current)")
        exit(0)
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        Daemon.printError("ringd: unknown argument \"\(argument)\"\n\n\(usage)")
        exit(2)
    }
}

let config: ServerConfig
do {
    config = try ConfigLoader.load(path: configPath, environment: environmentVariables())
} catch {
    Daemon.printError("ringd: \(error)")
    exit(1)
}
exit(Daemon.run(config: config, program: "ringd") { try Ringd(config: config) })

/// The process environment as a dictionary.
func environmentVariables() -> [String: String] {
    var result: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
        let pair = String(cString: pointer)
        if let equals = pair.firstIndex(of: "=") {
            result[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        entry += 1
    }
    return result
}
