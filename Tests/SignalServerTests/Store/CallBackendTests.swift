import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// What the service reads and keeps through ``CallBackend``, on every
/// backend: calls by session id and in histories, revocations, push tokens
/// and the webhook outbox answer alike in SQLite (file and memory) and in
/// a cluster's PostgreSQL.
@Suite(.blocking) struct CallBackendTests {
    /// Runs `body` with a fresh store of `backend`.
    private func with(_ backend: StoreBackend, _ body: (BackendStore) throws -> Void) throws {
        let store = try BackendStore(backend)
        defer { store.close() }
        try body(store)
    }

    // MARK: Calls

    @Test(arguments: StoreBackend.allCases)
    func aCallReadsBackFieldForFieldLiveEndedOrUnknown(_ backend: StoreBackend) throws {
        try with(backend) { store in
            let metadata = JSONValue.object([
                ("title", .string("Standup ☎️ \"o'neil\"\n")), ("count", .integer(-3)), ("ratio", .double(0.25)),
                ("flags", .array([.bool(true), .null, .object([])])), ("a", .integer(1)),
            ])
            let ended = Call(
                sessionId: "ended", callType: .video, status: .ended, initiator: "alice", receiver: "bob",
                initiatorDevice: "laptop", initiatedAt: 1_700_000_000_123, acceptedAt: 1_700_000_001_000,
                endedAt: 1_700_000_060_000, acceptedBy: "bob-tablet", endedBy: "bob", endReason: .hangup,
                timeoutMs: 45_000, metadata: metadata)
            let live = Call(
                sessionId: "live", callType: .audio, status: .initiated, initiator: "carol", receiver: "dave",
                initiatedAt: 0, timeoutMs: 30_000, ringingDevices: ["dave-watch", "dave \"phone\" ☎️"],
                clientCallId: String(repeating: "7", count: 64))
            let emptyMetadata = Call(
                sessionId: "empty", callType: .audio, status: .rejected, initiator: "x", receiver: "y",
                initiatedAt: -1, endedAt: 5, endedBy: "y", endReason: .rejected, timeoutMs: 0,
                metadata: .object([]), rejectReason: "In a meeting · back at 3 ☕️")
            var named = live
            named.sessionId = "named"
            named.initiatorName = "Carol ☎️"
            named.initiatorAvatarUrl = "https://img.example/carol.png?size=2"
            named.receiverName = "Dave"
            named.silent = true
            try store.save([ended, live, emptyMetadata, named])
            #expect(try store.call("named") == named)
            #expect(try store.call("ended") == ended)
            #expect(try store.call("live") == live)
            #expect(try store.call("ended")?.ringingDevices == [], "none acknowledged: none read back")
            #expect(try store.call("empty") == emptyMetadata)
            #expect(try store.call("unknown") == nil)
            for reason in EndReason.allCases {
                var call = ended
                call.endReason = reason
                try store.save([call])
                #expect(try store.call("ended")?.endReason == reason)
            }
        }
    }

    // MARK: Users

    @Test(arguments: StoreBackend.allCases)
    func aUserRecordIsKeptOnlyWhileSomethingIsSet(_ backend: StoreBackend) throws {
        try with(backend) { store in
            func update(
                _ uid: String, at now: Int64, _ change: @escaping @Sendable (inout UserRecord) -> Void
            ) throws -> (before: UserRecord, after: UserRecord) {
                try waitForResult { store.seam.updateUser(uid: uid, at: now, change, completion: $0) }.get()
            }
            func user(_ uid: String) throws -> UserRecord? {
                try waitForResult { store.seam.user(uid: uid, completion: $0) }.get()
            }
            #expect(try user("alice") == nil)
            let profile = try UserProfile(
                name: "Alice “Ally” 👩‍💻", avatarUrl: "https://img.example/a.png",
                metadata: .object([("team", .string("blue"))]))
            let first = try update("alice", at: 10) { $0.profile = profile }
            #expect(first.before.isEmpty && first.after.profile == profile && first.after.updatedAt == 10)
            #expect(try user("alice") == first.after)
            let busy = DoNotDisturb(mode: .busy, until: 99_000)
            let second = try update("alice", at: 20) { $0.doNotDisturb = busy }
            #expect(second.before == first.after)
            #expect(try user("alice") == UserRecord(uid: "alice", profile: profile, doNotDisturb: busy, updatedAt: 20))
            _ = try update("alice", at: 30) { $0.profile = nil }
            #expect(try user("alice")?.profile == nil)
            #expect(try user("alice")?.doNotDisturb == busy, "do-not-disturb alone keeps the record")
            let cleared = try update("alice", at: 40) { $0.doNotDisturb = .off }
            #expect(cleared.after.isEmpty && !cleared.before.isEmpty)
            #expect(try user("alice") == nil)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func anUpdateReplacesTheSnapshotAndKeepsItsPlace(_ backend: StoreBackend) throws {
        try with(backend) { store in
            var call = storedCall(1, status: .initiated)
            try store.save([call, storedCall(2)])
            call.status = .ongoing
            call.acceptedAt = call.initiatedAt + 2000
            call.acceptedBy = "bob-phone"
            try store.save([call])
            call.status = .ended
            call.endedAt = call.initiatedAt + 9000
            call.endedBy = "bob"
            call.endReason = .hangup
            call.metadata = .object([("note", .string("added later"))])
            try store.save([call])
            #expect(try store.call(call.sessionId) == call)
            #expect(try store.logs("alice").logs.map(\.call) == [storedCall(2), call])
            // Clearing optional fields writes NULLs.
            call.metadata = nil
            call.endedBy = nil
            try store.save([call])
            #expect(try store.call(call.sessionId) == call)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aSaveMayNotChangeTheParties(_ backend: StoreBackend) throws {
        try with(backend) { store in
            try store.save([storedCall(1)])
            var moved = storedCall(1)
            moved.receiver = "mallory"
            moved.status = .rejected
            let error = try #require(throws: StoreError.self) { try store.save([moved]) }
            #expect(error.code == .callConflict)
            #expect(try store.call("session-1") == storedCall(1))
            #expect(try store.logs("mallory").logs.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func historiesLogBothPartiesWithDirectionPeerAndMissed(_ backend: StoreBackend) throws {
        try with(backend) { store in
            let answered = storedCall(1, "alice", "bob", type: .video, status: .ended)
            let unanswered = storedCall(2, "alice", "bob", status: .unanswered)
            try store.save([answered, unanswered])
            #expect(
                try store.logs("alice").logs == [
                    CallLog(call: unanswered, direction: .outgoing, missed: false),
                    CallLog(call: answered, direction: .outgoing, missed: false),
                ])
            #expect(
                try store.logs("bob").logs == [
                    CallLog(call: unanswered, direction: .incoming, missed: true),
                    CallLog(call: answered, direction: .incoming, missed: false),
                ])
            #expect(try store.logs("carol").logs.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func historiesFollowLaterSaves(_ backend: StoreBackend) throws {
        try with(backend) { store in
            var call = storedCall(1, status: .initiated)
            try store.save([call])
            #expect(try store.logs("bob", CallLogFilter(missedOnly: true)).logs.isEmpty)
            #expect(try store.logs("bob", CallLogFilter(status: .initiated)).logs.count == 1)
            call.status = .cancelled
            call.endedAt = call.initiatedAt + 5000
            call.endReason = .cancelled
            try store.save([call])
            #expect(try store.logs("bob", CallLogFilter(missedOnly: true)).logs.map(\.call) == [call])
            #expect(try store.logs("bob", CallLogFilter(status: .initiated)).logs.isEmpty)
            #expect(try store.logs("alice", CallLogFilter(status: .cancelled)).logs.map(\.missed) == [false])
            #expect(try store.logs("bob", CallLogFilter(missedOnly: true, with: "alice")).logs.map(\.call) == [call])
        }
    }

    // MARK: Revocations

    /// Per user, a later time replaces the stored one and an earlier one changes nothing.
    @Test(arguments: StoreBackend.allCases)
    func revocationsOnlyMoveForwardPerUser(_ backend: StoreBackend) throws {
        try with(backend) { store in
            #expect(try store.revocations().isEmpty)
            try store.saveRevocation(uid: "alice", at: 1000)
            try store.saveRevocation(uid: "bob", at: 2000)
            try store.saveRevocation(uid: "alice", at: 500)
            try store.saveRevocation(uid: "o'neil \"x\"", at: Int64.max)
            #expect(try store.revocations() == ["alice": 1000, "bob": 2000, "o'neil \"x\"": Int64.max])
            try store.saveRevocation(uid: "alice", at: 3000)
            try store.saveRevocation(uid: "bob", at: 2000)
            #expect(try store.revocations() == ["alice": 3000, "bob": 2000, "o'neil \"x\"": Int64.max])
        }
    }

    // MARK: Push tokens

    static func token(_ uid: String, _ deviceId: String, _ value: String, at: Int64) throws -> RegisteredPushToken {
        RegisteredPushToken(
            uid: uid, deviceId: deviceId,
            registration: try PushRegistration(platform: .fcm, token: value + String(repeating: "x", count: 32)),
            updatedAt: at)
    }

    /// A token is on one device at a time: saved for another device, of the
    /// same user or another, it moves there; everything saved reads back.
    @Test(arguments: StoreBackend.allCases)
    func aTokenMovesBetweenDevicesAndUsers(_ backend: StoreBackend) throws {
        try with(backend) { store in
            let phone = try Self.token("bob", "phone", "t1", at: 1000)
            #expect(try store.savePushToken(phone, limit: 10).movedFrom.isEmpty)
            let voip = try PushRegistration(
                platform: .apnsVoip, token: String(repeating: "ab", count: 32), topic: "net.ringd.x",
                environment: .sandbox)
            let ipad = RegisteredPushToken(uid: "bob", deviceId: "ipad", registration: voip, updatedAt: 1500)
            _ = try store.savePushToken(ipad, limit: 10)
            #expect(Set(try store.pushTokens()) == [phone, ipad])

            let tablet = RegisteredPushToken(uid: "bob", deviceId: "tablet", registration: voip, updatedAt: 1600)
            #expect(
                try store.savePushToken(tablet, limit: 10).movedFrom == [PushDeviceKey(uid: "bob", deviceId: "ipad")])
            let carols = try Self.token("carol", "phone", "t1", at: 2000)
            let moved = try store.savePushToken(carols, limit: 10)
            #expect(moved.movedFrom == [PushDeviceKey(uid: "bob", deviceId: "phone")])
            #expect(moved.evicted.isEmpty)
            #expect(Set(try store.pushTokens()) == [tablet, carols])
        }
    }

    /// A user keeps at most `limit` tokens: those registered longest ago
    /// go; registering a device again keeps the count.
    @Test(arguments: StoreBackend.allCases)
    func theOldestTokensGoBeyondTheLimit(_ backend: StoreBackend) throws {
        try with(backend) { store in
            _ = try store.savePushToken(try Self.token("dave", "phone", "t1", at: 1), limit: 3)
            _ = try store.savePushToken(try Self.token("dave", "tablet", "t2", at: 2), limit: 3)
            _ = try store.savePushToken(try Self.token("dave", "watch", "t3", at: 3), limit: 3)
            _ = try store.savePushToken(try Self.token("erin", "phone", "t4", at: 0), limit: 3)
            let evicted = try store.savePushToken(try Self.token("dave", "laptop", "t5", at: 4), limit: 3)
            #expect(
                evicted.evicted == [PushDeviceKey(uid: "dave", deviceId: "phone")], "the one registered longest ago")
            let again = try store.savePushToken(try Self.token("dave", "watch", "t3", at: 5), limit: 3)
            #expect(again.evicted.isEmpty && again.movedFrom.isEmpty, "re-registering a device keeps the count")
            #expect(
                Set(try store.pushTokens().map { "\($0.uid)/\($0.deviceId)" }) == [
                    "dave/tablet", "dave/watch", "dave/laptop", "erin/phone",
                ])
        }
    }

    /// A purge names the registration it was about: one made since, even
    /// of the same token, stays. Without one, the device's token goes.
    @Test(arguments: StoreBackend.allCases)
    func aDeleteSparesARegistrationMadeSince(_ backend: StoreBackend) throws {
        try with(backend) { store in
            let device = PushDeviceKey(uid: "bob", deviceId: "iphone")
            let pushed = try Self.token("bob", "iphone", "t1", at: 10)
            _ = try store.savePushToken(pushed, limit: 10)
            let renewed = try Self.token("bob", "iphone", "t1", at: 20)
            _ = try store.savePushToken(renewed, limit: 10)
            #expect(try store.deletePushToken(of: device, only: pushed) == false)
            #expect(try store.deletePushToken(of: device, only: try Self.token("bob", "iphone", "t2", at: 30)) == false)
            #expect(try store.pushTokens() == [renewed])
            #expect(try store.deletePushToken(of: device, only: renewed) == true)
            #expect(try store.pushTokens().isEmpty)

            _ = try store.savePushToken(try Self.token("bob", "iphone", "t3", at: 40), limit: 10)
            #expect(try store.deletePushToken(of: device) == true)
            #expect(try store.deletePushToken(of: device) == false)
            #expect(try store.pushTokens().isEmpty)
        }
    }

    /// An iOS device's alert token is stored with its VoIP token; a dead
    /// one goes alone, and only from the registration it was pushed with.
    @Test(arguments: StoreBackend.allCases)
    func anAlertTokenIsKeptBesideTheVoIPTokenAndClearedAlone(_ backend: StoreBackend) throws {
        try with(backend) { store in
            let device = PushDeviceKey(uid: "bob", deviceId: "iphone")
            func iphone(alert: String?, at: Int64) throws -> RegisteredPushToken {
                RegisteredPushToken(
                    uid: "bob", deviceId: "iphone",
                    registration: try PushRegistration(
                        platform: .apnsVoip, token: String(repeating: "ab", count: 32), alertToken: alert),
                    updatedAt: at)
            }
            let pushed = try iphone(alert: String(repeating: "c3", count: 32), at: 10)
            _ = try store.savePushToken(pushed, limit: 10)
            #expect(try store.pushTokens() == [pushed])
            let renewed = try iphone(alert: String(repeating: "d4", count: 32), at: 20)
            _ = try store.savePushToken(renewed, limit: 10)
            #expect(try store.clearAlertToken(of: device, only: pushed) == false, "a registration made since stays")
            #expect(try store.pushTokens() == [renewed])
            #expect(try store.clearAlertToken(of: device, only: renewed) == true)
            #expect(try store.pushTokens() == [try iphone(alert: nil, at: 20)], "the VoIP token stays")
            _ = try store.savePushToken(try iphone(alert: nil, at: 30), limit: 10)
            #expect(try store.pushTokens() == [try iphone(alert: nil, at: 30)], "registering without one drops it")
        }
    }

    // MARK: Webhook deliveries

    /// Pending deliveries come oldest change first, a page at a time, the
    /// next page from after the last one's change (as the dispatcher reads
    /// its backlog), every field and the body's bytes as written.
    @Test(arguments: StoreBackend.allCases)
    func pendingDeliveriesComeOldestFirstInPages(_ backend: StoreBackend) throws {
        try with(backend) { store in
            try store.insert([
                WebhookDelivery.fixture(24), WebhookDelivery.fixture(8, session: "s2"),
                WebhookDelivery.fixture(8, endpoint: "http://b/hook", session: "s2"),
                WebhookDelivery.fixture(12, status: .delivered), WebhookDelivery.fixture(14, status: .failed),
            ])
            try store.insert([WebhookDelivery.fixture(16)])
            let first = try store.pendingDeliveries(from: 0, limit: 3)
            #expect(
                first.map { "\($0.seq) \($0.endpoint)" } == ["8 http://a/hook", "8 http://b/hook", "16 http://a/hook"])
            #expect(
                first.first == WebhookDelivery.fixture(8, session: "s2"), "every field and the body's bytes come back")
            let next = try #require(first.last).seq + 1
            #expect(try store.pendingDeliveries(from: next, limit: 3).map(\.seq) == [24])
            #expect(try store.pendingDeliveries(from: 25, limit: 3).isEmpty)
        }
    }

    /// An attempt's outcome is kept; a failed delivery is set pending again
    /// by hand, one or all, due then and counted afresh; a pending one is not.
    @Test(arguments: StoreBackend.allCases)
    func anAttemptsOutcomeIsKeptAndFailedOnesAreRetried(_ backend: StoreBackend) throws {
        try with(backend) { store in
            try store.insert([
                WebhookDelivery.fixture(8), WebhookDelivery.fixture(16), WebhookDelivery.fixture(24),
                WebhookDelivery.fixture(8, endpoint: "http://b/hook"),
            ])
            // The dispatcher records what it read.
            #expect(try store.pendingDeliveries(from: 0, limit: 10).count == 4)
            var failed: [WebhookDelivery] = []
            for (seq, endpoint) in [(8, "http://a/hook"), (8, "http://b/hook"), (24, "http://a/hook")] {
                var delivery = WebhookDelivery.fixture(Int64(seq), endpoint: endpoint)
                delivery.status = .failed
                delivery.attempts = 3
                delivery.lastStatus = 500
                delivery.lastError = "HTTP 500"
                delivery.updatedAt = 5000
                try store.saveAttempt(delivery)
                failed.append(delivery)
            }
            var delivered = WebhookDelivery.fixture(16)
            delivered.status = .delivered
            delivered.attempts = 1
            delivered.lastStatus = 204
            delivered.updatedAt = 4000
            try store.saveAttempt(delivered)
            #expect(try store.deliveries(WebhookDeliveryQuery(status: .delivered)).deliveries == [delivered])
            #expect(
                Set(try store.deliveries(WebhookDeliveryQuery(status: .failed)).deliveries) == Set(failed))
            #expect(try store.deliveries(WebhookDeliveryQuery(status: .pending)).deliveries.isEmpty)

            let one = try store.retryDeliveries(endpoint: "http://b/hook", seq: 8, now: 9000)
            var expected = failed[1]
            (expected.status, expected.attempts, expected.nextAttemptAt, expected.updatedAt) = (.pending, 0, 9000, 9000)
            #expect(one == [expected], "the last attempt's answer stays")
            #expect(
                try store.retryDeliveries(endpoint: "http://b/hook", seq: 8, now: 9500).isEmpty, "a pending one is not")
            #expect(
                try store.retryDeliveries(endpoint: "http://a/hook", seq: 16, now: 9500).isEmpty, "nor a delivered one")
            let all = try store.retryDeliveries(now: 10_000)
            #expect(
                all.map { "\($0.seq) \($0.endpoint) \($0.status) \($0.attempts)" }.sorted() == [
                    "24 http://a/hook pending 0", "8 http://a/hook pending 0",
                ])
            #expect(all.allSatisfy { $0.nextAttemptAt == 10_000 && $0.updatedAt == 10_000 })
            #expect(try store.deliveries(WebhookDeliveryQuery(status: .failed)).deliveries.isEmpty)
            #expect(
                try store.pendingDeliveries(from: 0, limit: 10).map { "\($0.seq) \($0.endpoint)" } == [
                    "8 http://a/hook", "8 http://b/hook", "24 http://a/hook",
                ], "retried deliveries are pending again")
        }
    }

    /// The outbox lists newest change first in pages whose cursor compares
    /// endpoints bytewise; a cursor the server did not issue fails; pruning
    /// deletes settled deliveries touched before the cutoff, a bounded
    /// number at a time, and keeps pending ones.
    @Test(arguments: StoreBackend.allCases)
    func theOutboxIsListedNewestFirstAndPrunedOfSettledDeliveries(_ backend: StoreBackend) throws {
        try with(backend) { store in
            try store.insert([
                WebhookDelivery.fixture(8, endpoint: "http://B"), WebhookDelivery.fixture(8, endpoint: "http://a"),
                WebhookDelivery.fixture(16, status: .delivered, updatedAt: 100),
                WebhookDelivery.fixture(24, status: .failed, updatedAt: 100),
                WebhookDelivery.fixture(32, updatedAt: 100),
                WebhookDelivery.fixture(40, status: .delivered, updatedAt: 5000),
            ])
            var seen: [String] = []
            var query = WebhookDeliveryQuery(limit: 2)
            repeat {
                let page = try store.deliveries(query)
                seen += page.deliveries.map { "\($0.seq) \($0.endpoint)" }
                query.cursor = page.next
            } while query.cursor != nil
            #expect(
                seen == [
                    "40 http://a/hook", "32 http://a/hook", "24 http://a/hook", "16 http://a/hook", "8 http://a",
                    "8 http://B",
                ])
            let page = try store.deliveries(WebhookDeliveryQuery(status: .pending, limit: 1))
            #expect(page.deliveries.map(\.seq) == [32])
            let rest = try store.deliveries(WebhookDeliveryQuery(status: .pending, limit: 5, cursor: page.next))
            #expect(rest.deliveries.map(\.endpoint) == ["http://a", "http://B"] && rest.next == nil)
            let error = try #require(throws: StoreError.self) {
                try store.deliveries(WebhookDeliveryQuery(cursor: "nonsense"))
            }
            #expect(error.code == .badCursor)

            #expect(try store.pruneDeliveries(before: 1000, limit: 1) == 1)
            #expect(try store.pruneDeliveries(before: 1000, limit: 10) == 1)
            #expect(try store.pruneDeliveries(before: 1000, limit: 10) == 0)
            #expect(try store.deliveries(WebhookDeliveryQuery()).deliveries.map(\.seq) == [40, 32, 8, 8])
        }
    }
}
