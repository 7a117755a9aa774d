import SignalCore
import SignalProtocol
import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    usage: ringd [--config PATH] [--ephemeral]
           ringd gen-cert [--config PATH] [--days N] [--force]
           ringd states [--format markdown|json]
           ringd migrate-store [--config PATH] [--from SQLITE] [--to POSTGRES]

    Runs the ringing signaling server in the foreground until SIGINT or SIGTERM;
    SIGHUP reloads the TLS certificate and key.
      --config PATH   configuration file (default: ./config.json, else
                      /etc/ringd/config.json)
      --ephemeral     keep the store in memory and write no file at all (for
                      tests): calls, tokens and the token secret last as long as
                      the process; reads no configuration file but the one
                      --config names (else the defaults); listens on a free port
                      unless listen.port (that file, RINGD_LISTEN_PORT) names one
      --version       print the version and exit
      --help          show this help

    gen-cert writes a self-signed certificate for localhost, 127.0.0.1 and ::1
    (tls-cert.pem, and tls-key.pem with mode 0600) into the data directory, the
    directory of store.path (default data/); --days sets its lifetime (default
    365), --force replaces existing files.

    states prints the call state machine's transition table (docs/STATES.md):
    for each state of a call and each input, the next state, the reply, who
    hears of it and the timers, found by running the machine on a manual clock.
    It reads no configuration and opens no store; --format json prints an array
    of row objects.

    migrate-store copies a stopped single node's SQLite store (--from, default
    store.path) into the PostgreSQL database of a cluster that has no calls yet
    (--to, a libpq connection string such as 'host=/run/postgresql dbname=ringd',
    default store.url), in one transaction: every call at its position, live
    calls ended with server_restart, the revocations, the push tokens, the
    webhook outbox and the generated token secret. The
    configuration (--config PATH, else as for serving) is read only for what
    --from or --to leave out. See docs/MIGRATE-STORE.md.

    Every configuration key can be overridden by an environment variable:
    RINGD_ plus the key in upper snake case, e.g. RINGD_LISTEN_PORT=0.
    Once listening, ringd prints one line per listener on stdout:
    listening ws://HOST:PORT (plain) and listening wss://HOST:PORT (TLS).

    Under systemd, ringd serves the sockets socket activation passes (LISTEN_FDS;
    one named tls serves TLS) in place of the configured ports, and reports
    READY=1, STOPPING=1 and, with WatchdogSec=, WATCHDOG=1 (NOTIFY_SOCKET).
    """

var configPath: String?
/// Where ringd looks for its configuration without --config, in order: the
/// repository's file when run from a checkout, then the system's.
let configSearchPath = ["config.json", "/etc/ringd/config.json"]
var arguments = CommandLine.arguments.dropFirst()
if arguments.first == "states" { printStates(arguments.dropFirst()) }
if arguments.first == "migrate-store" { migrateStore(arguments.dropFirst()) }
let generateCertificate = arguments.first == "gen-cert"
if generateCertificate { arguments = arguments.dropFirst() }
var certificateDays = 365
var replaceCertificate = false
var ephemeral = false

/// Exits 2 with `message` and where to read the usage.
func usageError(_ message: String) -> Never {
    Daemon.printError("ringd: \(message) (see ringd --help)")
    exit(2)
}

while let argument = arguments.popFirst() {
    switch argument {
    case "--config":
        guard let path = arguments.popFirst() else { usageError("--config needs a path") }
        configPath = path
    case "--ephemeral":
        ephemeral = true
    case "--days" where generateCertificate:
        guard let text = arguments.popFirst(), let days = Int(text), (1 ... 3650).contains(days) else {
            usageError("--days needs a number of days from 1 to 3650")
        }
        certificateDays = days
    case "--force" where generateCertificate:
        replaceCertificate = true
    case "--version":
        print("ringd \(RingdVersion.current)")
        exit(0)
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        usageError("unknown argument \"\(argument)\"")
    }
}

if generateCertificate && ephemeral {
    usageError("gen-cert writes into the data directory, and --ephemeral keeps no data directory")
}
// An ephemeral ringd reads only the file it is given: a config.json that
// happens to be in the test's directory must not choose its port or keys.
let configFile = configPath ?? (ephemeral ? nil : configSearchPath.first(where: { access($0, F_OK) == 0 }))
let config: ServerConfig
do {
    if ephemeral {
        config = try ConfigLoader.loadEphemeral(path: configFile, environment: environmentVariables())
    } else {
        guard let configFile else {
            Daemon.printError(
                "ringd: no configuration file: neither \(configSearchPath.joined(separator: " nor ")) exists (pass --config PATH, or --ephemeral for the defaults)"
            )
            exit(1)
        }
        config = try ConfigLoader.load(path: configFile, environment: environmentVariables())
    }
} catch {
    Daemon.printError("ringd: \(error)")
    exit(1)
}
if generateCertificate {
    guard let directory = config.dataDirectory else {
        Daemon.printError(
            "ringd: gen-cert: store.path is \"\(config.storePath)\", an in-memory store with no data directory to write the certificate into; set store.path to a file"
        )
        exit(1)
    }
    do {
        let (files, written) = try DevelopmentCertificate.write(
            into: directory, days: certificateDays,
            replace: replaceCertificate)
        let what =
            written
            ? "wrote \(files.certificatePath) and \(files.privateKeyPath) (localhost, 127.0.0.1, ::1; \(certificateDays) days)"
            : "kept the existing \(files.certificatePath) and \(files.privateKeyPath) (pass --force to replace them)"
        print(
            """
            \(what)
            serve TLS with:  RINGD_TLS_CERTIFICATE=\(files.certificatePath) RINGD_TLS_PRIVATE_KEY=\(files.privateKeyPath) RINGD_TLS_PORT=8443 \\
                               RINGD_AUTH_ALLOW_DEVELOPMENT_KEYS=true make run   (the development keys, on a trusted network)
            connect with:    ringctl --server wss://localhost:8443 --ca-file \(files.certificatePath) …
            """)
        exit(0)
    } catch {
        Daemon.printError("ringd: gen-cert: \(error)")
        exit(1)
    }
}
exit(Daemon.run(config: config, program: "ringd", configFile: configFile) { try Ringd(config: config) })

/// `ringd states`: prints the transition table and exits, before any configuration is read.
func printStates(_ arguments: ArraySlice<String>) -> Never {
    var arguments = arguments
    var format = StateTable.Format.markdown
    while let argument = arguments.popFirst() {
        switch argument {
        case "--format":
            guard let name = arguments.popFirst(), let chosen = StateTable.Format(rawValue: name) else {
                usageError("--format needs markdown or json")
            }
            format = chosen
        case "--help", "-h":
            print(usage)
            exit(0)
        default:
            usageError("unknown argument \"\(argument)\"")
        }
    }
    do {
        print(try StateTable.render(format), terminator: "")
        exit(0)
    } catch {
        Daemon.printError("ringd: states: \(error)")
        exit(1)
    }
}

/// `ringd migrate-store`: copies a single node's store into PostgreSQL and exits.
func migrateStore(_ arguments: ArraySlice<String>) -> Never {
    var arguments = arguments
    var from: String?, to: String?, configArgument: String?
    while let argument = arguments.popFirst() {
        switch argument {
        case "--from", "--to", "--config":
            guard let value = arguments.popFirst(), !value.isEmpty else { usageError("\(argument) needs a value") }
            switch argument {
            case "--from": from = value
            case "--to": to = value
            default: configArgument = value
            }
        case "--help", "-h":
            print(usage)
            exit(0)
        default:
            usageError("unknown argument \"\(argument)\"")
        }
    }
    // Flags win over the configuration, which is read only when given or
    // needed: both flags together migrate without any configuration.
    if configArgument != nil || from == nil || to == nil {
        guard let file = configArgument ?? configSearchPath.first(where: { access($0, F_OK) == 0 }) else {
            usageError("migrate-store needs --from and --to, or a configuration with store.path and store.url")
        }
        do {
            let config = try ConfigLoader.load(path: file, environment: environmentVariables())
            from = from ?? config.storePath
            to = to ?? config.cluster.url
        } catch {
            Daemon.printError("ringd: migrate-store: \(error)")
            exit(1)
        }
    }
    guard let from, let to else { usageError("migrate-store needs --to, or store.url in the configuration") }
    do {
        print(try StoreMigrator.migrate(from: from, to: to))
        exit(0)
    } catch {
        Daemon.printError("ringd: migrate-store: \(error)")
        exit(1)
    }
}

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
