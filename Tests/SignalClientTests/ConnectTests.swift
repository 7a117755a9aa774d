import Foundation
import SignalProtocol
import SignalServer
import TestSupport
import Testing

@testable import SignalClient

@Suite("Connecting, authenticating and the REST API", .prompt)
struct ConnectTests {
    @Test("auth by dev key: uid, device id, no active call; close ends the events with 1000")
    func authKey() async throws {
        try await withRingd { ringd in
            let client = try await ringd.connect("alice", device: "laptop")
            let streams = ClientStreams(client)
            #expect(client.uid == "alice")
            #expect(client.deviceId == "laptop")
            #expect(client.initialActiveCall == nil)
            #expect(try await client.getActiveCall() == nil)
            await client.close()
            let error = try await streams.nextDisconnect()
            #expect(error.code == .closed)
            #expect(error.closeCode == 1000)
            #expect(await streams.events.next(timeout: 1) == nil)
            #expect(streams.events.isFinished)
            #expect(try await clientError { try await client.getActiveCall() }.code == .closed)
        }
    }

    @Test("without a device id the server assigns one")
    func assignedDevice() async throws {
        try await withRingd { ringd in
            let client = try await ringd.connect("alice")
            #expect(client.deviceId.hasPrefix("d-"))
            #expect(client.deviceId.count == 18)
            await client.close()
        }
    }

    @Test("auth by a token minted through the REST API")
    func token() async throws {
        try await withRingd { ringd in
            let minted = try await ringd.rest.mintToken(uid: "bob", ttlSeconds: 600)
            #expect(minted.token.hasPrefix("v1."))
            #expect(minted.expiresAt > Int64(Date().timeIntervalSince1970 * 1000))
            let client = try await SignalClient.connect(
                to: ringd.endpoint, credentials: .token(minted.token),
                options: ConnectOptions(deviceId: "phone"))
            #expect(client.uid == "bob")
            #expect(client.deviceId == "phone")
            await client.close()
        }
    }

    @Test("revoked tokens fail with ERR_AUTH_FAILED")
    func revoke() async throws {
        try await withRingd { ringd in
            let minted = try await ringd.rest.mintToken(uid: "bob")
            try await ringd.rest.revokeTokens(uid: "bob")
            let error = try await clientError {
                try await SignalClient.connect(to: ringd.endpoint, credentials: .token(minted.token))
            }
            #expect(error.code == .server(.authFailed))
        }
    }

    @Test("a bad auth key fails with ERR_AUTH_FAILED")
    func badKey() async throws {
        try await withRingd { ringd in
            let error = try await clientError {
                try await SignalClient.connect(to: ringd.endpoint, credentials: .authKey(uid: "alice", key: "wrong"))
            }
            #expect(error.code == .server(.authFailed))
            #expect(error.message == "unknown auth key")
        }
    }

    @Test("a port nobody listens on fails with CLIENT_CONNECT_FAILED")
    func unreachable() async throws {
        let ringd = try RingdFixture()
        let endpoint = ringd.endpoint
        await ringd.stop()
        let error = try await clientError {
            try await SignalClient.connect(to: endpoint, credentials: .authKey(uid: "alice", key: RingdFixture.authKey))
        }
        #expect(error.code == .connectFailed)
        let restError = try await clientError { try await RestClient(endpoint: endpoint, apiKey: nil).health() }
        #expect(restError.code == .connectFailed)
    }

    @Test("an unknown host fails with CLIENT_CONNECT_FAILED")
    func unknownHost() async throws {
        let endpoint = try ServerEndpoint(url: "ws://no-such-host.invalid:8787")
        let error = try await clientError {
            try await SignalClient.connect(to: endpoint, credentials: .authKey(uid: "alice", key: "k"))
        }
        #expect(error.code == .connectFailed)
    }

    @Test("a refused upgrade fails with CLIENT_HANDSHAKE_FAILED, the status and the server's message")
    func refusedUpgrade() async throws {
        try await withRingd { ringd in
            let endpoint = ServerEndpoint(host: ringd.endpoint.host, port: ringd.endpoint.port, path: "/nope")
            let error = try await clientError {
                try await SignalClient.connect(
                    to: endpoint, credentials: .authKey(uid: "alice", key: RingdFixture.authKey))
            }
            #expect(error.code == .handshakeFailed)
            #expect(error.httpStatus == 404)
            #expect(error.message.contains("404"))
            #expect(error.message.contains("no resource at /nope"))
        }
    }

    @Test("a server that never answers the upgrade gives CLIENT_TIMEOUT")
    func silentServer() async throws {
        let listener = try SilentListener()
        let endpoint = ServerEndpoint(host: "127.0.0.1", port: listener.port)
        let started = Date()
        let error = try await clientError {
            try await SignalClient.connect(
                to: endpoint, credentials: .authKey(uid: "alice", key: "k"),
                options: ConnectOptions(connectTimeout: 0.3))
        }
        #expect(error.code == .timeout)
        #expect(Date().timeIntervalSince(started) < 3)
    }

    @Test("the server's pings are answered, so a quiet client stays connected")
    func keepAlive() async throws {
        // A quiet spell longer than the ping timeout, which only answered
        // pings survive; the timeout leaves room for a loaded machine to be
        // slow to answer one.
        try await withRingd({ config in
            config.pingInterval = 0.2
            config.pingTimeout = 1.2
        }) { ringd in
            let client = try await ringd.connect("alice", device: "laptop")
            let streams = ClientStreams(client)
            #expect(await streams.events.next(timeout: 2) == nil)
            #expect(try await client.getActiveCall() == nil)
            await client.close()
        }
    }

    @Test("health() needs no key")
    func health() async throws {
        try await withRingd { ringd in
            let health = try await RestClient(endpoint: ringd.endpoint, apiKey: nil).health()
            #expect(health["status"] == .string("ok"))
            #expect(health["version"]?.stringValue != nil)
        }
    }

    @Test("REST with a wrong key fails with CLIENT_HTTP 401 and the server's message")
    func wrongAPIKey() async throws {
        try await withRingd { ringd in
            let rest = RestClient(endpoint: ringd.endpoint, apiKey: "wrong")
            let error = try await clientError { try await rest.mintToken(uid: "alice") }
            #expect(error.code == .http)
            #expect(error.httpStatus == 401)
            #expect(error.message == "unknown API key")
            let revokeError = try await clientError {
                try await RestClient(endpoint: ringd.endpoint, apiKey: nil).revokeTokens(uid: "a")
            }
            #expect(revokeError.httpStatus == 401)
        }
    }

    @Test("path segments are percent-encoded")
    func pathSegment() {
        #expect(RestClient.pathSegment("alice.b-c_d@x") == "alice.b-c_d@x")
        #expect(RestClient.pathSegment("a b/c?é") == "a%20b%2Fc%3F%C3%A9")
    }
}
