import SignalProtocol

/// The subcommands of ringctl.
enum Subcommand: String, CaseIterable, Sendable {
    /// `answer`: wait for calls and answer them.
    case answer
    /// `call UID`: ring a user and follow the call to its end.
    case call
    /// `logs`: the user's call history.
    case logs
    /// `token UID`: mint an auth token through the REST API.
    case token
    /// `revoke UID`: revoke every token of a user through the REST API.
    case revoke
    /// `status`: server health and the user's active call.
    case status
    /// `push PLATFORM TOKEN`: set this device's push token; `push --remove`: remove it.
    case push
    /// `user set UID --name NAME` / `user get UID`: a user's profile through the REST API.
    case user

    /// The options the subcommand takes besides the global ones.
    var options: Set<String> {
        switch self {
        case .answer:
            ["--auto-accept", "--auto-reject", "--busy", "--accept-after", "--hangup-after", "--once", "--reason"]
        case .call: ["--type", "--timeout", "--metadata", "--hangup-after", "--client-call-id"]
        case .logs: ["--status", "--direction", "--with", "--type", "--limit", "--all"]
        case .token: ["--ttl"]
        case .revoke, .status: []
        case .push: ["--topic", "--environment", "--alert-token", "--remove"]
        case .user: ["--name", "--avatar-url"]
        }
    }

    /// Whether the subcommand takes one UID argument.
    var takesUID: Bool { self == .call || self == .token || self == .revoke }

    /// What its arguments are called, for usage errors; nil when it takes none.
    func positionalNames(removing: Bool) -> [String] {
        switch self {
        case .call, .token, .revoke: ["UID"]
        case .push: removing ? [] : ["PLATFORM", "TOKEN"]
        case .user: ["ACTION", "UID"]
        case .answer, .logs, .status: []
        }
    }
}

/// The options every subcommand accepts, before or after it.
private let globalOptions: Set<String> = [
    "--server", "--as", "--auth-key", "--token", "--api-key", "--device", "--json", "--ca-file", "--insecure",
    "--compress",
]

/// The options that take a value (`--name VALUE` or `--name=VALUE`).
private let valueOptions: Set<String> = [
    "--server", "--as", "--auth-key", "--token", "--api-key", "--device", "--ca-file", "--accept-after",
    "--hangup-after",
    "--type", "--timeout", "--metadata", "--status", "--direction", "--with", "--limit", "--ttl", "--topic",
    "--environment", "--alert-token", "--reason", "--name", "--avatar-url", "--client-call-id",
]

/// The command line split into subcommand, UID, option values and flags,
/// checked against what the subcommand takes.
struct Arguments: Sendable {
    /// The subcommand, if one was named.
    private(set) var subcommand: Subcommand?
    /// `--help` or `-h` was given: show help instead of running anything.
    private(set) var wantsHelp = false
    /// `--version` was given: print it instead of running anything.
    private(set) var wantsVersion = false
    /// The arguments that are not options (the UID).
    private var positionals: [String] = []
    /// The values of value options, in the order given.
    private var values: [String: [String]] = [:]
    /// The flags given.
    private var flags: Set<String> = []

    /// Parses `arguments` (without the program name). Problems are reported
    /// after the whole line is read, so that `--help` anywhere wins.
    init(parsing arguments: [String]) throws(Failure) {
        var problems: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--help" || argument == "-h" {
                wantsHelp = true
            } else if argument == "--version" {
                wantsVersion = true
            } else if argument.hasPrefix("-") && argument.count > 1 {
                let parts = argument.split(separator: "=", maxSplits: 1)
                let name = String(parts[0])
                guard name.hasPrefix("--"),
                    globalOptions.contains(name) || valueOptions.contains(name)
                        || Subcommand.allCases.contains(where: { $0.options.contains(name) })
                else {
                    problems.append("unknown option \(name)")
                    continue
                }
                if valueOptions.contains(name) {
                    if parts.count == 2 {
                        values[name, default: []].append(String(parts[1]))
                    } else if let value = remaining.first, !value.hasPrefix("--") {
                        values[name, default: []].append(remaining.removeFirst())
                    } else {
                        problems.append("\(name) needs a value")
                    }
                } else if parts.count == 2 {
                    problems.append("\(name) takes no value")
                } else {
                    flags.insert(name)
                }
            } else if subcommand == nil {
                guard let named = Subcommand(rawValue: argument) else {
                    problems.append("unknown command \"\(argument)\"")
                    continue
                }
                subcommand = named
            } else {
                positionals.append(argument)
            }
        }
        guard !wantsHelp && !wantsVersion else { return }
        if let problem = problems.first { throw Failure.usage(problem, command: subcommand) }
        try check()
    }

    /// Checks the options and the UID against what the subcommand takes.
    private func check() throws(Failure) {
        guard let subcommand else { throw Failure.usage("no command given", command: nil) }
        let allowed = globalOptions.union(subcommand.options)
        if let stray = Set(values.keys).union(flags).subtracting(allowed).sorted().first {
            throw Failure.usage("\(stray) is not an option of \(subcommand.rawValue)", command: subcommand)
        }
        let names = subcommand.positionalNames(removing: flag("--remove"))
        let expected = names.count
        if positionals.count < expected {
            let needed = names.count == 1 ? "a \(names[0])" : names.joined(separator: " and ")
            throw Failure.usage("\(subcommand.rawValue) needs \(needed)", command: subcommand)
        }
        if positionals.count > expected {
            throw Failure.usage("unexpected argument \"\(positionals[expected])\"", command: subcommand)
        }
    }

    /// The argument at `index` among those that are not options.
    func positional(_ index: Int) -> String? { index < positionals.count ? positionals[index] : nil }

    /// The value of option `name`, if given (the last one when given more than once).
    func value(_ name: String) -> String? { values[name]?.last }

    /// Every value of option `name`, in the order given (for `--server`, which adds up).
    func allValues(_ name: String) -> [String] { values[name] ?? [] }

    /// Whether flag `name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The UID argument, checked to be a valid uid.
    func uid() throws(Failure) -> String {
        let uid = positionals.first ?? ""
        guard Identifier.isValid(uid) else {
            throw usage("\"\(uid)\" is not a valid uid (1–100 of A-Z a-z 0-9 . _ - @)")
        }
        return uid
    }

    /// A number of seconds, at least zero.
    func seconds(_ name: String) throws(Failure) -> Double? {
        guard let text = value(name) else { return nil }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
            throw usage("\(name) needs a number of seconds, not \"\(text)\"")
        }
        return seconds
    }

    /// A whole number within `range`.
    func integer(_ name: String, in range: ClosedRange<Int>) throws(Failure) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw usage("\(name) needs a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return number
    }

    /// One of the cases of `type`, by its raw value.
    func choice<Choice: RawRepresentable & CaseIterable>(_ name: String, _ type: Choice.Type) throws(Failure) -> Choice?
    where Choice.RawValue == String {
        guard let text = value(name) else { return nil }
        guard let choice = Choice(rawValue: text) else {
            let options = Choice.allCases.map(\.rawValue).joined(separator: "|")
            throw usage("\(name) needs one of \(options), not \"\(text)\"")
        }
        return choice
    }

    /// A usage error pointing at the subcommand's help.
    func usage(_ message: String) -> Failure {
        Failure.usage(message, command: subcommand)
    }
}
