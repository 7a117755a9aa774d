import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// `ringd migrate-store` as an operator runs it: the summary and exit 0,
/// exit 1 with one line saying what was refused, exit 2 for a usage error,
/// and the store and database taken from a configuration file.
@Suite("EndToEnd: ringd migrate-store", .blocking, .serialized)
struct MigrateStoreCommandLineTests {
    /// Runs `ringd migrate-store` with `arguments` in `directory`.
    static func migrate(
        _ arguments: [String], in directory: TemporaryDirectory
    ) throws
        -> (status: ChildProcess.Termination?, output: String, errors: String)
    {
        let (output, errors) = (directory.file("stdout"), directory.file("stderr"))
        for file in [output, errors] { try? FileManager.default.removeItem(atPath: file) }
        let status = try RingdProcess.run(
            ["migrate-store"] + arguments, directory: directory.path, stdout: .file(output), stderr: .file(errors),
            timeout: 60)
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return (status, read(output), read(errors))
    }

    @Test func migratesOnceThenRefusesAndReadsAConfiguration() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try StoreMigrationTests.makeStore(in: directory)
        let calls = try StoreConnection(readingOnly: path).database.scalarInt64("SELECT count(*) FROM calls") ?? 0
        let server = try ThrowawayPostgres()
        defer { server.stop() }

        let first = try Self.migrate(["--from", path, "--to", server.url], in: directory)
        #expect(first.status == .exited(0), "\(first.errors)")
        #expect(first.output.hasPrefix("migrated \(path) into PostgreSQL in one transaction, "), "\(first.output)")
        #expect(
            first.output.contains("\n  calls:            \(calls) (2 live: ended with server_restart)\n"),
            "\(first.output)")
        #expect(first.output.contains("\n  revocations:      2\n"))
        #expect(first.output.contains("\n  token secret:     copied from \(directory.file("data/token-secret"))"))
        #expect(first.output.contains("\n  push tokens:      2\n"), "\(first.output)")
        #expect(first.output.contains("\n  webhook outbox:   3 deliveries\n"))
        #expect(first.errors.isEmpty, "no libpq notice or warning: \(first.errors)")

        let again = try Self.migrate(["--from", path, "--to", server.url], in: directory)
        #expect(again.status == .exited(1))
        #expect(again.errors.hasPrefix("ringd: migrate-store: PostgreSQL already holds calls"), "\(again.errors)")
        #expect(again.output.isEmpty)

        try PostgresConnection(url: server.url).execute("CREATE DATABASE second")
        let config = directory.file("cluster.json")
        try #"{"store": {"backend": "postgres", "path": "\#(path)", "url": "\#(server.url) dbname=second"}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let configured = try Self.migrate(["--config", config], in: directory)
        #expect(configured.status == .exited(0), "\(configured.errors)")
        #expect(configured.output.contains("\n  calls:            \(calls) "), "\(configured.output)")
        let second = try PostgresConnection(url: server.url + " dbname=second")
        #expect(try second.execute("SELECT count(*) FROM calls").int64(0, 0) == calls)
    }

    /// The point of it all: a cluster node started on the database takes a
    /// token signed with the single node's secret, pages alice's history as
    /// the node would have after a restart, cursor for cursor, and puts a
    /// new call above every copied position.
    @Test func aClusterNodeStartedAfterwardsServesTheNodesTokensAndHistory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try StoreMigrationTests.makeStore(in: directory)
        let cluster = try SignalingIntegration.TestCluster(nodes: 0)
        let run = try Self.migrate(["--from", path, "--to", cluster.url], in: directory)
        #expect(run.status == .exited(0), "\(run.errors)")
        try cluster.addNode()

        let secret = try #require(try TokenSecret.kept(in: directory.file("data")))
        let tokens = TokenAuthority(secret: secret, revocations: [:])
        let alice = try SignalingIntegration.Device.connect(port: cluster.port(0))
        let token = try tokens.mint(uid: "alice", ttlSeconds: 600, now: WallClock.milliseconds()).token
        #expect(try alice.auth(token: token, deviceId: "alice-tablet").ok, "\(cluster.logs)")

        let sqlite = try StoreMigrationTests.restartedNode(path)
        var cursor: String?
        var pages = 0
        repeat {
            let expected = try sqlite.callLogs(for: "alice", query: CallLogFilter(limit: 5, cursor: cursor))
            let reply = try alice.logs(limit: 5, cursor.map { [("cursor", $0)] } ?? [])
            #expect(SignalingIntegration.sessionIds(reply.data) == expected.logs.map(\.call.sessionId), "page \(pages)")
            #expect(reply.data?["next"]?.stringValue == expected.next, "page \(pages)")
            cursor = expected.next
            pages += 1
        } while cursor != nil
        #expect(pages > 2)

        let bob = try SignalingIntegration.Device.open(port: cluster.port(0), uid: "bob", deviceId: "b9")
        let placed = try alice.initiate(to: "bob").call()
        _ = try bob.waitForEvent(placed.sessionId, .initiated)
        #expect(placed.seq > (try sqlite.highestCallPosition()), "the cluster's positions follow the copied ones")
        #expect(SignalingIntegration.sessionIds(try alice.logs(limit: 1).data) == [placed.sessionId])
    }

    @Test func usageErrorsExitTwo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var cases: [([String], String)] = [
            (["--from"], "ringd: --from needs a value (see ringd --help)\n"),
            (["--frm", "x"], "ringd: unknown argument \"--frm\" (see ringd --help)\n"),
        ]
        // Without a configuration in the directory or /etc/ringd, no --to can be found.
        if access("/etc/ringd/config.json", F_OK) != 0 {
            cases.append(
                (
                    ["--from", "x"],
                    "ringd: migrate-store needs --from and --to, or a configuration with store.path and store.url (see ringd --help)\n"
                ))
        }
        for (arguments, message) in cases {
            let run = try Self.migrate(arguments, in: directory)
            #expect(run.status == .exited(2), "\(arguments)")
            #expect(run.errors == message, "\(arguments)")
        }
        let config = directory.file("single.json")
        try #"{"store": {"path": "\#(directory.file("ringd.sqlite"))"}}"#.write(
            toFile: config, atomically: true, encoding: .utf8)
        let run = try Self.migrate(["--config", config], in: directory)
        #expect(run.status == .exited(2))
        #expect(run.errors == "ringd: migrate-store needs --to, or store.url in the configuration (see ringd --help)\n")
    }
}
