import SignalCrypto
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A ringd started by `--spawn`: on a free port, with a temporary store, an
/// empty configuration file (the defaults, whatever the working directory),
/// raised rate limits, optionally pinned with `taskset`; stopped with SIGTERM.
final class SpawnedServer {
    let pid: pid_t
    let url: String
    let directory: String

    /// Starts `path` with the `KEY=value` entries of `overrides` added to
    /// its environment (each replacing an earlier entry of its name) (and, with `tls`, a generated certificate to serve TLS
    /// alone), and waits up to 10 s for its `listening ws://…` (or `wss://`) line.
    init(path: String, cpus: String?, tls: Bool = false, overrides: [String] = []) throws {
        var template = Array("/tmp/ringbench.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw RunError(message: "mkdtemp failed") }
        directory = String(cString: made)
        var overrides = overrides
        // ringbench's clients log in with the development key, which ringd
        // refuses with TLS unless told the network (loopback here) is trusted.
        if tls { overrides += try Self.writeCertificate(into: directory) + ["RINGD_AUTH_ALLOW_DEVELOPMENT_KEYS=true"] }
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw RunError(message: "pipe failed") }
        var environment = [
            "RINGD_LISTEN_PORT=0", "RINGD_STORE_PATH=\(directory)/ringd.sqlite", "RINGD_LOG_LEVEL=warning",
            "RINGD_LIMITS_REQUESTS_PER_SECOND=100000", "RINGD_LIMITS_REQUEST_BURST=100000",
        ]
        if let cpus { environment.append("RINGD_THREADS=\(SpawnedServer.cpuCount(cpus))") }
        // A later entry replaces an earlier one of the same name, so that
        // every reader of the environment sees the same value.
        for entry in overrides {
            let name = entry.prefix { $0 != "=" } + "="
            environment.removeAll { $0.hasPrefix(name) }
            environment.append(entry)
        }
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if !text.hasPrefix("RINGD_") { environment.append(text) }
            index += 1
        }
        let config = "\(directory)/config.json"
        guard let file = fopen(config, "w") else { throw RunError(message: "cannot write \(config)") }
        fputs("{}\n", file)
        fclose(file)
        let command = [path, "--config", config]
        let arguments = cpus.map { ["/usr/bin/taskset", "-c", $0] + command } ?? command
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "\(directory)/ringd.log", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        var child: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let status = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
        close(pipeFDs[1])
        defer { close(pipeFDs[0]) }
        guard status == 0 else { throw RunError(message: "cannot start \(path): \(String(cString: strerror(status)))") }
        pid = child
        var output = ""
        var byte: UInt8 = 0
        var pollFD = pollfd(fd: pipeFDs[0], events: Int16(POLLIN), revents: 0)
        let deadline = monotonicNanos() + 10_000_000_000
        while !output.hasSuffix("\n"), monotonicNanos() < deadline {
            guard Glibc.poll(&pollFD, 1, 100) >= 0 else { break }
            if pollFD.revents == 0 { continue }
            guard read(pipeFDs[0], &byte, 1) == 1 else { break }
            output.append(Character(UnicodeScalar(byte)))
        }
        guard output.hasPrefix("listening ws://") || output.hasPrefix("listening wss://") else {
            kill(child, SIGKILL)
            waitpid(child, nil, 0)
            throw RunError(message: "ringd did not become ready (see \(directory)/ringd.log): \(output)")
        }
        url = String(output.dropFirst("listening ".count).dropLast())
    }

    /// Writes a generated certificate and key into `directory`; returns the
    /// environment entries that make ringd serve them.
    private static func writeCertificate(into directory: String) throws -> [String] {
        let generated = try SelfSignedCertificate.generate()
        var entries: [String] = []
        for (name, pem, variable) in [
            ("cert.pem", generated.certificatePEM, "RINGD_TLS_CERTIFICATE"),
            ("key.pem", generated.privateKeyPEM, "RINGD_TLS_PRIVATE_KEY"),
        ] {
            let path = "\(directory)/\(name)"
            guard let file = fopen(path, "w") else { throw RunError(message: "cannot write \(path)") }
            fputs(pem, file)
            fclose(file)
            entries.append("\(variable)=\(path)")
        }
        return entries
    }

    /// Stops the server (SIGTERM), waits for it and removes its temporary directory.
    func stop() {
        kill(pid, SIGTERM)
        waitpid(pid, nil, 0)
        guard let listing = opendir(directory) else { return }
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { unlink("\(directory)/\(name)") }
        }
        closedir(listing)
        rmdir(directory)
    }

    private static func cpuCount(_ list: String) -> Int {
        (try? CPUSet(list).cpus.count) ?? 1
    }
}
