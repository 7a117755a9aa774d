import Foundation
import TestSupport

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server for one suite, from Debian's `postgresql` (which
/// `make test` installs): `initdb` into a temporary directory, `pg_ctl`
/// serving on a Unix socket in it and on no TCP port, trust auth for user
/// `ringd`, fsync off. PostgreSQL refuses to run as root, so as root it runs
/// as `nobody` (through `runuser`), which then owns the directory.
final class ThrowawayPostgres {
    let directory: String
    /// A libpq connection string for database `postgres`.
    let url: String
    private let pgCtl: String
    private let binDirectory: String
    private let asUser: [String]

    init() throws {
        guard let bin = Self.binDirectory() else {
            throw TestSocketError("PostgreSQL is not installed (make deps installs postgresql)")
        }
        pgCtl = bin + "/pg_ctl"
        binDirectory = bin
        directory = "/tmp/ringd-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        asUser = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "nobody", "--"] : []
        if getuid() == 0 { _ = try Command.run("/bin/chown", ["nobody:nogroup", directory]) }
        url = "host=\(directory) user=ringd dbname=postgres connect_timeout=10"
        try run(bin + "/initdb", ["-D", directory + "/data", "-U", "ringd", "-A", "trust", "--no-sync", "-E", "UTF8"])
        try start()
    }

    /// Starts the server; -w waits until it accepts connections (at most -t seconds).
    func start() throws {
        try run(
            pgCtl,
            [
                "-D", directory + "/data", "-w", "-t", "30", "-l", directory + "/server.log", "-o",
                "-k \(directory) -c listen_addresses='' -F -c max_connections=50", "start",
            ])
    }

    /// Stops the server at once, as a crash or a failover would (what
    /// committed is kept: the log is replayed at the next start).
    func crash() throws {
        try run(pgCtl, ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
    }

    /// What a failover to a promoted replica looks like to the nodes: the
    /// server goes away (cleanly: `pg_resetwal` needs that), and comes back
    /// writing on the next timeline, with what committed kept.
    func nextTimeline() throws {
        let file = try PostgresConnection(url: url).execute("SELECT pg_walfile_name(pg_current_wal_lsn())")
            .string(0, 0)
        guard let file, file.count == 24, let timeline = UInt32(file.prefix(8), radix: 16),
            let log = UInt32(file.dropFirst(8).prefix(8), radix: 16)
        else { throw TestSocketError("an unexpected WAL file name: \(file ?? "none")") }
        try run(pgCtl, ["-D", directory + "/data", "-m", "fast", "-w", "stop"])
        // A segment past every one written, on the next timeline.
        let next = [timeline + 1, log + 1, 0].map { String(format: "%08X", $0) }.joined()
        try run(binDirectory + "/pg_resetwal", ["-l", next, directory + "/data"])
        try start()
    }

    /// Stops the server at once and removes the directory.
    func stop() {
        _ = try? run(pgCtl, ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    /// A new connection to a database carrying ringd's schema.
    func migratedConnection() throws -> PostgresConnection {
        let connection = try PostgresConnection(url: url)
        try PostgresSchema.migrate(connection)
        return connection
    }

    /// Runs a PostgreSQL tool through Python's subprocess, which closes
    /// every descriptor but 0–2 in the child: Foundation's `Process` passes
    /// the test process's descriptors on (its output pipe among them), and
    /// the server `pg_ctl` leaves running would hold them open for good.
    private func run(_ executable: String, _ arguments: [String]) throws {
        let spawn =
            "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL).returncode)"
        let result = try Command.run("/usr/bin/python3", ["-c", spawn] + asUser + [executable] + arguments)
        guard result.status == 0 else {
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            throw TestSocketError("\(executable) \(arguments.joined(separator: " ")) failed: \(result.output)\(log)")
        }
    }

    /// The newest PostgreSQL's `bin` under /usr/lib/postgresql.
    private static func binDirectory() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap(Int.init).sorted().last.map { "\(root)/\($0)/bin" }
            .flatMap { FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl") ? $0 : nil }
    }
}
