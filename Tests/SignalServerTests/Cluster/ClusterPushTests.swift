import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// VoIP push in a cluster (docs/CLUSTER.md, "Push"): tokens registered on
/// one node are known on every node, the node that placed the call pushes
/// it, the push stops when another node decides the call stopped ringing,
/// and a token the service calls dead is gone from every node.
@Suite("Cluster: push tokens and VoIP pushes across ringd nodes", .blocking)
struct ClusterPushTests {
    static let deadToken = "dead-registration-token:" + String(repeating: "d", count: 40)
    /// An iPad's regular APNs token that APNs calls dead.
    static let deadAlertToken = String(repeating: "e5", count: 32)

    /// The mock APNs and FCM, and the configuration that points every node at them.
    final class Rig {
        let certificate: CertificateFiles
        let mock: MockPushServer
        let directory: TemporaryDirectory
        /// Every node's configuration: push to the mock.
        let config: String

        init() throws {
            certificate = try CertificateFiles()
            let keys = try RingdPushRig.Keys.shared.get()
            directory = try TemporaryDirectory(prefix: "ringd-cluster-push")
            mock = try MockPushServer(
                certificate: certificate, apnsPublicKey: keys.apnsPublicKeyPEM,
                apnsKeyId: RingdPushRig.keyId, apnsTeamId: RingdPushRig.teamId,
                fcmPublicKey: keys.fcmPublicKeyPEM, fcmClientEmail: RingdPushRig.clientEmail,
                fcmProject: RingdPushRig.project,
                script: [
                    ClusterPushTests.deadToken: [
                        MockPushAnswer(
                            status: 404,
                            fcmError: "UNREGISTERED")
                    ],
                    ClusterPushTests.deadAlertToken: [MockPushAnswer(status: 410, reason: "Unregistered")],
                ])
            let account: JSONValue = .object([
                ("type", .string("service_account")), ("project_id", .string(RingdPushRig.project)),
                ("client_email", .string(RingdPushRig.clientEmail)), ("private_key", .string(keys.fcmPrivateKeyPEM)),
                ("token_uri", .string(mock.baseURL + "/token")),
            ])
            let accountPath = try directory.writeSecret(account.serialized, named: "service-account.json")
            let p8 = try directory.writeSecret(keys.apnsPrivateKeyPEM, named: "AuthKey_\(RingdPushRig.keyId).p8")
            let push: JSONValue = .object([
                (
                    "apns",
                    .object([
                        ("keyFile", .string(p8)), ("keyId", .string(RingdPushRig.keyId)),
                        ("teamId", .string(RingdPushRig.teamId)), ("bundleId", .string(RingdPushRig.bundleId)),
                        ("productionURL", .string(mock.baseURL)), ("sandboxURL", .string(mock.baseURL)),
                    ])
                ),
                ("fcm", .object([("serviceAccountFile", .string(accountPath)), ("baseURL", .string(mock.baseURL))])),
                ("caFile", .string(certificate.certificatePath)),
            ])
            config = JSONValue.object([("push", push)]).serialized
        }

        /// The mock's FCM requests for `token` whose data `type` is `type`.
        func fcm(_ type: String, to token: String) throws -> [MockPushRequest] {
            try mock.requests.filter {
                $0.kind == .fcm && $0.token == token && $0.body?["message"]?["data"]?["type"]?.stringValue == type
            }
        }

        deinit {
            _ = mock.stop()
            certificate.remove()
            directory.remove()
        }
    }

    /// The device ids with a token of `uid`, as node `index` lists them.
    static func devices(of uid: String, on index: Int, _ cluster: SignalingIntegration.TestCluster) -> [String]? {
        guard
            let listed = try? SignalingIntegration.rest(
                port: cluster.port(index), "GET", "/v1/users/\(uid)/push-tokens"
            ).json,
            case .array(let devices)? = listed["devices"]
        else { return nil }
        return devices.compactMap { $0["pushToken"]?["deviceId"]?.stringValue }.sorted()
    }

    @Test(
        "node 0 rings node 1's token, node 1's accept cancels it, a dead token goes everywhere, a new node reads them")
    func pushAcrossNodes() throws {
        let rig = try Rig()
        let cluster = try SignalingIntegration.TestCluster(nodes: 2, config: rig.config)
        let pixel = try cluster.open(1, uid: "bob", deviceId: "pixel")
        let registered = try pixel.request(
            "registerPushToken",
            [
                ("platform", .string("fcm")),
                ("token", .string(RingdPushRig.pixelToken)),
            ])
        #expect(registered.ok, "\(registered) \(cluster.logs)")
        let rest = try SignalingIntegration.rest(
            port: cluster.port(1), "PUT", "/v1/users/bob/devices/iphone/push-token",
            body: #"{"platform":"apns-voip","token":"\#(RingdPushRig.iphoneToken)"}"#)
        #expect(rest.status == 200, "\(rest)")
        pixel.close()
        #expect(
            waitUntil(timeout: 10) { Self.devices(of: "bob", on: 0, cluster) == ["iphone", "pixel"] },
            "node 0 lists \(String(describing: Self.devices(of: "bob", on: 0, cluster))) \(cluster.logs)")

        // Bob is offline everywhere: node 0, which placed the call, pushes both devices.
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let placed = try alice.initiate(to: "bob").call()
        // Generous: FCM's first push fetches an access token first, and a
        // loaded machine may retry that fetch.
        let rings =
            try rig.mock.waitForRequests(count: 1, kind: .apns, timeout: 30)
            + rig.mock.waitForRequests(count: 1, kind: .fcm, timeout: 30)
        #expect(Set(rings.compactMap(\.token)) == [RingdPushRig.pixelToken, RingdPushRig.iphoneToken], "\(rings)")
        #expect(rings.allSatisfy { $0.violations.isEmpty }, "\(rings.map(\.violations))")
        let outcome = {
            (try? SignalingIntegration.rest(port: cluster.port(0), "GET", "/v1/users/bob/devices/pixel/push-token").json)??[
                "push"]?["lastOutcome"]?.stringValue
        }
        #expect(
            waitUntil(timeout: 10) { outcome() == "sent" },
            "node 0 did not push: \(String(describing: outcome())) \(cluster.logs)")

        // Bob comes back on node 1 and accepts there: node 0 sends the FCM cancel.
        let back = try cluster.open(1, uid: "bob", deviceId: "pixel")
        #expect(try back.accept(placed.sessionId).call().status == .ongoing)
        #expect(
            waitUntil(timeout: 10) { ((try? rig.fcm("call_cancelled", to: RingdPushRig.pixelToken)) ?? []).count == 1 },
            "no cancel: \(String(describing: try? rig.mock.requests)) \(cluster.logs)")
        let cancel = try #require(try rig.fcm("call_cancelled", to: RingdPushRig.pixelToken).first)
        #expect(cancel.body?["message"]?["data"]?["sessionId"]?.stringValue == placed.sessionId)
        #expect(cancel.body?["message"]?["data"]?["status"]?.stringValue == "ongoing")
        #expect(try alice.end(placed.sessionId).ok)

        // push.mode offline, cluster-wide: the pixel is connected to node 1, so
        // node 0 pushes only the iPhone; carol's dead token, pushed from node
        // 1, is gone from node 0's list too.
        let carol = try cluster.open(1, uid: "carol", deviceId: "tablet")
        #expect(
            try carol.request("registerPushToken", [("platform", .string("fcm")), ("token", .string(Self.deadToken))])
                .ok)
        carol.close()
        #expect(waitUntil(timeout: 10) { Self.devices(of: "carol", on: 0, cluster) == ["tablet"] })
        // Her disconnect runs on her user's worker, the call below on the
        // caller's: until it commits she counts as connected, and is not pushed.
        #expect(
            waitUntil(timeout: 10) {
                (try? PostgresRows.count(url: cluster.url, "SELECT count(*) FROM presence WHERE uid = 'carol'")) == 0
            })
        let second = try alice.initiate(to: "bob").call()
        _ = try back.waitForEvent(second.sessionId, .initiated)
        _ = try rig.mock.waitForRequests(count: 2, kind: .apns, timeout: 15)
        #expect(try alice.cancel(second.sessionId).ok)
        #expect(
            try rig.fcm("incoming_call", to: RingdPushRig.pixelToken).count == 1, "the connected pixel was pushed again"
        )

        let bobOnOne = try cluster.open(1, uid: "bob", deviceId: "b2")
        _ = try bobOnOne.initiate(to: "carol").call()
        #expect(
            waitUntil(timeout: 15) {
                Self.devices(of: "carol", on: 0, cluster) == [] && Self.devices(of: "carol", on: 1, cluster) == []
            },
            "the dead token stayed: \(String(describing: Self.devices(of: "carol", on: 0, cluster))) \(cluster.logs)")
        #expect(try rig.fcm("incoming_call", to: Self.deadToken).count == 1)

        // A node that starts now reads the tokens from the database.
        try cluster.addNode()
        #expect(Self.devices(of: "bob", on: 2, cluster) == ["iphone", "pixel"], "\(cluster.logs)")
    }

    /// Node 0 pushed the ring; the caller cancels on node 1: node 0, which
    /// hears the stop, sends each alert once, and the dead alert token it
    /// finds is gone from node 1's list too, the VoIP token kept.
    @Test("a call cancelled on another node alerts once from the node that pushed it")
    func missedCallAlertsAcrossNodes() throws {
        let rig = try Rig()
        let cluster = try SignalingIntegration.TestCluster(nodes: 2, config: rig.config)
        for (deviceId, body) in [
            ("pixel", #"{"platform":"fcm","token":"\#(RingdPushRig.pixelToken)"}"#),
            (
                "iphone",
                #"{"platform":"apns-voip","token":"\#(RingdPushRig.iphoneToken)","alertToken":"\#(RingdPushRig.alertToken)"}"#
            ),
            (
                "ipad",
                #"{"platform":"apns-voip","token":"\#(RingdPushRig.ipadToken)","alertToken":"\#(Self.deadAlertToken)"}"#
            ),
        ] {
            let put = try SignalingIntegration.rest(
                port: cluster.port(1), "PUT", "/v1/users/bob/devices/\(deviceId)/push-token", body: body)
            #expect(put.status == 200, "\(put)")
        }
        #expect(
            waitUntil(timeout: 10) { Self.devices(of: "bob", on: 0, cluster) == ["ipad", "iphone", "pixel"] },
            "\(cluster.logs)")
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let placed = try alice.initiate(to: "bob").call()
        _ = try rig.mock.waitForRequests(count: 2, kind: .apns, timeout: 15)
        _ = try rig.mock.waitForRequests(count: 1, kind: .fcm, timeout: 15)
        let aliceOnOne = try cluster.open(1, uid: "alice", deviceId: "a2")
        #expect(try aliceOnOne.cancel(placed.sessionId).ok)

        let isAlert = { (request: MockPushRequest) in
            request.headers["apns-push-type"] == "alert"
                || request.body?["message"]?["data"]?["type"]?.stringValue == "missed_call"
        }
        #expect(
            waitUntil(timeout: 15) { ((try? rig.mock.requests.filter(isAlert)) ?? []).count >= 3 },
            "alerts: \(String(describing: try? rig.mock.requests.filter(isAlert))) \(cluster.logs)")
        #expect(
            waitUntil(timeout: 10) { ((try? rig.fcm("call_cancelled", to: RingdPushRig.pixelToken)) ?? []).count == 1 })
        let alerts = try rig.mock.requests.filter(isAlert)
        #expect(
            Set(alerts.compactMap(\.token)) == [RingdPushRig.pixelToken, RingdPushRig.alertToken, Self.deadAlertToken],
            "one alert per device, from one node: \(alerts.map(\.token))")
        #expect(alerts.count == 3)
        #expect(alerts.allSatisfy { $0.violations.isEmpty }, "\(alerts.map(\.violations))")
        let fcm = try #require(alerts.first { $0.kind == .fcm })
        #expect(fcm.body?["message"]?["data"]?["sessionId"]?.stringValue == placed.sessionId)
        #expect(fcm.body?["message"]?["notification"]?["body"]?.stringValue == "Missed call from alice")

        let ipadOnOne = {
            let path = "/v1/users/bob/devices/ipad/push-token"
            return (try? SignalingIntegration.rest(port: cluster.port(1), "GET", path).json?["pushToken"]) ?? nil
        }
        #expect(
            waitUntil(timeout: 15) {
                ipadOnOne()?["token"]?.stringValue == RingdPushRig.ipadToken && ipadOnOne()?["alertToken"] == nil
            },
            "node 1 still lists \(String(describing: ipadOnOne())) \(cluster.logs)")
    }

    /// A node may miss a broadcast while its listener is not connected: it
    /// reads every token again when it attaches. A row written behind the
    /// nodes' backs (no broadcast) stands for the missed one.
    @Test("a node whose listener lost the database reads the tokens again")
    func tokensAreReadAgainAfterTheListenerReconnects() throws {
        let rig = try Rig()
        let cluster = try SignalingIntegration.TestCluster(nodes: 1, config: rig.config)
        let db = try PostgresConnection(url: cluster.url)
        try db.execute(
            """
            INSERT INTO push_tokens (uid, device_id, platform, token, topic, environment, updated_at)
            VALUES ('erin', 'watch', 'fcm', $1, NULL, NULL, 1)
            """, [RingdPushRig.pixelToken])
        #expect(Self.devices(of: "erin", on: 0, cluster) == [], "nothing told the node")
        try db.execute(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE pid <> pg_backend_pid() AND datname = current_database()
            """)
        #expect(
            waitUntil(timeout: 15) { Self.devices(of: "erin", on: 0, cluster) == ["watch"] },
            "\(String(describing: Self.devices(of: "erin", on: 0, cluster))) \(cluster.logs)")
    }
}
