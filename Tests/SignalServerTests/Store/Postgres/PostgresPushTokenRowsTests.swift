import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// Every push token read a page at a time (the listener does on each
/// attach), each page a statement of its own, so that no one statement
/// has to read the whole table within the statement timeout.
@Suite(.serialized, .blocking) struct PostgresPushTokenRowsTests {
    static func token(_ uid: String, _ deviceId: String, _ n: Int) throws -> RegisteredPushToken {
        RegisteredPushToken(
            uid: uid, deviceId: deviceId,
            registration: try PushRegistration(
                platform: .fcm, token: "fcm-token-\(n)-" + String(repeating: "x", count: 32)),
            updatedAt: 1_000 + Int64(n))
    }

    @Test func everyTokenIsReadOnceAcrossPages() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        var stored: [RegisteredPushToken] = []
        for n in 0 ..< 25 {
            let token = try Self.token(["alice", "bob", "o\"neil", "ünï"][n % 4], "d\(n)", n)
            _ = try db.transaction { () throws(PostgresError) in try db.savePushToken(token, limit: 100) }
            stored.append(token)
        }
        for page in [1, 4, 5, 25, 1000] {
            let read = try db.pushTokens(page: page)
            #expect(read.count == 25 && Set(read) == Set(stored), "page \(page)")
        }
        #expect(Set(try db.pushTokens(of: ["bob"])) == Set(stored.filter { $0.uid == "bob" }))
    }
}
