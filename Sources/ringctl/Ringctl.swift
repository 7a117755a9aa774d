import SignalClient
import SignalProtocol

/// The ringctl program: reads the command line, runs one command, exits with
/// its status.
enum Ringctl {
    /// The program: blocks the stop signals before any other thread exists (so
    /// every thread inherits the mask), runs the command on the cooperative
    /// pool, and takes the signals on the main thread until the command exits.
    static func main() -> Never {
        StopSignals.block()
        let arguments = Array(CommandLine.arguments.dropFirst())
        let console = Console(json: arguments.contains("--json"))
        Task.detached { await run(arguments: arguments, console: console) }
        StopSignals.takeSignals(console: console)
    }

    /// Runs the command in `arguments` (without the program name) and exits.
    private static func run(arguments: [String], console: Console) async -> Never {
        do throws(Failure) {
            terminate(try await execute(Arguments(parsing: arguments), console: console))
        } catch {
            console.fail(error)
            terminate(error.exitCode)
        }
    }

    /// Runs the parsed command; returns its exit status or throws why it failed.
    private static func execute(_ arguments: Arguments, console: Console) async throws(Failure) -> ExitCode {
        if arguments.wantsVersion && !arguments.wantsHelp {
            console.help("ringctl \(RingdVersion.current)")
            return .success
        }
        guard !arguments.wantsHelp, let command = arguments.subcommand else {
            console.help(Help.text(for: arguments.subcommand))
            return .success
        }
        let settings = try Settings(arguments)
        if let warning = settings.warning { console.warn(warning) }
        switch command {
        case .answer:
            let request = try AnswerRequest(arguments)
            return await follow(try await settings.connect(for: command, reconnect: true), settings, console) {
                session in
                await Answerer(session: session, request: request).run()
            }
        case .call:
            let request = try CallRequest(arguments)
            return await follow(try await settings.connect(for: command, reconnect: true), settings, console) {
                session in
                await Caller(session: session, request: request).run()
            }
        case .logs:
            try await LogsCommand.run(try LogsRequest(arguments), settings: settings, console: console)
        case .token:
            let ttl = try arguments.integer("--ttl", in: 1 ... 31_536_000)
            try await AdminCommands.token(
                uid: try arguments.uid(), ttlSeconds: ttl, settings: settings, console: console)
        case .revoke:
            try await AdminCommands.revoke(uid: try arguments.uid(), settings: settings, console: console)
        case .status:
            try await AdminCommands.status(settings: settings, console: console)
        case .push:
            try await PushCommand.run(
                try PushRequest(arguments, settings: settings), settings: settings, console: console)
        case .user:
            try await UserCommand.run(try UserRequest(arguments), settings: settings, console: console)
        }
        return .success
    }

    /// Runs a call or answer session on `client` and closes the connection after it.
    private static func follow(
        _ client: SignalClient, _ settings: Settings, _ console: Console,
        _ body: (Session) async -> ExitCode
    ) async -> ExitCode {
        let session = Session(client: client, console: console, server: settings.server)
        let code = await body(session)
        await session.close()
        return code
    }
}
