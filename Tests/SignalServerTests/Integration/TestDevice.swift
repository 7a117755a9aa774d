import SignalProtocol
import SignalServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Namespace of the signaling integration tests: every suite is nested here,
/// so `swift test --filter SignalingIntegration` selects them all and the
/// helpers cannot clash with other test files of the module.
enum SignalingIntegration {
    static let authKey = "ringd-dev-auth-key"
    static let apiKey = "ringd-dev-api-key"
}

extension SignalingIntegration {
    /// A failure of the test client (timeouts, unexpected frames).
    struct ClientError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A call as a device saw it: the wire JSON and its decoding.
    @dynamicMemberLookup
    struct Snapshot: CustomStringConvertible {
        let json: JSONValue
        let call: Call

        init(_ json: JSONValue) throws {
            self.json = json
            call = try Call(json: json)
        }

        subscript<T>(dynamicMember path: KeyPath<Call, T>) -> T { call[keyPath: path] }

        /// `durationMs` as sent (not recomputed).
        var wireDurationMs: Int64? { json["durationMs"]?.integerValue }
        var description: String { json.serialized }
    }

    /// A `{"type":"result"}` frame.
    struct Reply: CustomStringConvertible {
        let raw: JSONValue
        var id: String? { raw["id"]?.stringValue }
        var ok: Bool { raw["ok"]?.boolValue == true }
        var data: JSONValue? { raw["data"] }
        var code: String? { raw["error"]?["code"]?.stringValue }
        var message: String { raw["error"]?["message"]?.stringValue ?? "" }
        var ringing: Int64? { data?["ringing"]?.integerValue }
        var description: String { raw.serialized }

        /// `data.call`, decoded; throws when the result is an error or has no call.
        func call() throws -> Snapshot {
            guard ok, let json = data?["call"], json != .null else { throw ClientError("no call in \(self)") }
            return try Snapshot(json)
        }
    }

    /// A blocking ringing-protocol client over a ``TestWebSocket``. Results are
    /// matched to requests by id; call events read meanwhile are buffered for
    /// ``nextEvent(timeout:)``.
    final class Device: CustomStringConvertible {
        let ws: TestWebSocket
        private(set) var uid = ""
        private(set) var deviceId = ""
        private var events: [Snapshot] = []
        private var results: [Reply] = []
        /// `{"type":"signal"}` frames read, in order.
        private var signals: [JSONValue] = []
        /// The close frame the server sent (its code), once read.
        private(set) var closeCode: WebSocketCloseCode??
        /// Whether the server closed TCP.
        private(set) var sawEOF = false
        private var counter = 0

        init(_ ws: TestWebSocket) { self.ws = ws }

        var description: String { "\(uid)/\(deviceId)" }

        /// Connects to `/v1/ws` (`query` appended to the path) with extra upgrade headers.
        static func connect(port: Int, query: String = "", headers: [String] = []) throws -> Device {
            let (socket, response) = try handshake(port: port, query: query, headers: headers)
            guard response.status == 101 else {
                throw ClientError("handshake answered \(response.status): \(response.bodyText)")
            }
            return Device(TestWebSocket(socket: socket))
        }

        /// Sends an upgrade request for `/v1/ws` with extra headers; returns the response.
        static func handshake(
            port: Int, query: String = "", headers: [String] = []
        ) throws -> (TestSocket, TestHTTPResponse) {
            let socket = try TestSocket(port: port)
            let key = randomWebSocketKey()
            let lines =
                [
                    "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: \(key)",
                    "Sec-WebSocket-Version: 13",
                ] + headers
            try socket.send(upgradeRequest(path: "/v1/ws" + query, key: key, headers: lines))
            return (socket, try socket.readResponse())
        }

        /// Connects and authenticates with the dev key; fails unless the auth succeeds.
        static func open(port: Int, uid: String, deviceId: String?) throws -> Device {
            let device = try connect(port: port)
            let reply = try device.auth(uid: uid, deviceId: deviceId)
            guard reply.ok else { throw ClientError("auth of \(uid)/\(deviceId ?? "-") failed: \(reply)") }
            return device
        }

        // MARK: Authentication

        func auth(
            uid: String, deviceId: String?, key: String = SignalingIntegration.authKey,
            timeout: Double = 5
        ) throws -> Reply {
            var params: [(String, JSONValue)] = [("uid", .string(uid)), ("authKey", .string(key))]
            if let deviceId { params.append(("deviceId", .string(deviceId))) }
            return try authenticate(try request("auth", params, timeout: timeout))
        }

        func auth(token: String, deviceId: String?, timeout: Double = 5) throws -> Reply {
            var params: [(String, JSONValue)] = [("authToken", .string(token))]
            if let deviceId { params.append(("deviceId", .string(deviceId))) }
            return try authenticate(try request("auth", params, timeout: timeout))
        }

        /// Records who this device is from a successful auth result.
        @discardableResult
        func authenticate(_ reply: Reply) throws -> Reply {
            if reply.ok, uid.isEmpty {
                uid = reply.data?["user"]?["uid"]?.stringValue ?? ""
                deviceId = reply.data?["deviceId"]?.stringValue ?? ""
            }
            return reply
        }

        // MARK: Requests

        /// Sends raw text.
        func send(text: String) throws { try ws.send(text: text) }

        /// Sends a request with a fresh id without reading; returns the id.
        @discardableResult
        func send(_ type: String, _ params: [(String, JSONValue)] = []) throws -> String {
            counter += 1
            let id = "r\(counter)"
            let frame = JSONValue.object([("type", .string(type)), ("id", .string(id))] + params.map { ($0.0, $0.1) })
            try ws.send(text: frame.serialized)
            return id
        }

        /// Sends a request and reads until its result arrives.
        func request(_ type: String, _ params: [(String, JSONValue)] = [], timeout: Double = 5) throws -> Reply {
            try result(for: try send(type, params), timeout: timeout)
        }

        /// Reads until the result with `id` (nil: `"id":null`) arrives, buffering events.
        func result(for id: String?, timeout: Double = 5) throws -> Reply {
            let deadline = monotonicSeconds() + timeout
            while true {
                if let index = results.firstIndex(where: { $0.id == id }) { return results.remove(at: index) }
                guard try readFrame(until: deadline) else {
                    throw ClientError("\(self): connection closed before the result of \(id ?? "null")")
                }
            }
        }

        /// The next call event.
        func nextEvent(timeout: Double = 5) throws -> Snapshot {
            let deadline = monotonicSeconds() + timeout
            while events.isEmpty {
                guard try readFrame(until: deadline) else {
                    throw ClientError("\(self): closed while waiting for an event")
                }
            }
            return events.removeFirst()
        }

        /// The next `{"type":"signal"}` frame, as sent.
        func nextSignal(timeout: Double = 5) throws -> JSONValue {
            let deadline = monotonicSeconds() + timeout
            while signals.isEmpty {
                guard try readFrame(until: deadline) else {
                    throw ClientError("\(self): closed while waiting for a signal")
                }
            }
            return signals.removeFirst()
        }

        /// Signals read so far, after a `getActiveCall` barrier: everything
        /// relayed to this device before the barrier's result is in.
        func drainSignals() throws -> [JSONValue] {
            try barrier()
            defer { signals = [] }
            return signals
        }

        /// Reads events until one of `sessionId` with `status` (skipping others).
        func waitForEvent(_ sessionId: String, _ status: CallStatus, timeout: Double = 5) throws -> Snapshot {
            let deadline = monotonicSeconds() + timeout
            while true {
                let event = try nextEvent(timeout: max(0.001, deadline - monotonicSeconds()))
                if event.sessionId == sessionId && event.status == status { return event }
            }
        }

        /// True when no call event arrives within `seconds` (only for asserting absence).
        func expectNoEvent(within seconds: Double) throws -> Bool {
            let deadline = monotonicSeconds() + seconds
            while events.isEmpty {
                do {
                    guard try readFrame(until: deadline) else { return events.isEmpty }
                } catch is TestSocketError where monotonicSeconds() >= deadline {
                    return true
                }
            }
            return false
        }

        /// Every call event delivered so far. A `getActiveCall` request is a
        /// barrier: events committed before it reach this device before its result.
        func drainEvents() throws -> [Snapshot] {
            try barrier()
            defer { events = [] }
            return events
        }

        /// A `getActiveCall` round trip: whatever was committed for this
        /// device before it has reached it once its result is in.
        private func barrier() throws {
            let reply = try request("getActiveCall")
            guard reply.ok else { throw ClientError("\(self): barrier failed: \(reply)") }
        }

        /// Events already read, without waiting.
        var bufferedEvents: [Snapshot] { events }

        /// Reads frames until the server's close frame; returns its code.
        func nextClose(timeout: Double = 5) throws -> WebSocketCloseCode? {
            let deadline = monotonicSeconds() + timeout
            while closeCode == nil {
                guard try readFrame(until: deadline) else {
                    throw ClientError("\(self): TCP closed before a close frame")
                }
            }
            return closeCode!
        }

        /// The next text message as raw bytes, unparsed (for frames the parser may refuse).
        func nextRawMessage(timeout: Double = 5) throws -> [UInt8] {
            let deadline = monotonicSeconds() + timeout
            while true {
                switch try ws.nextEvent(timeout: max(0.001, deadline - monotonicSeconds())) {
                case .message(let message)?: return message.payload
                case .ping(let payload)?: try? ws.send(.pong, payload)
                case .pong?: continue
                case .close(let code, _)?:
                    closeCode = .some(code); throw ClientError("\(self): closed with \(String(describing: code))")
                case nil: sawEOF = true; throw ClientError("\(self): TCP closed")
                }
            }
        }

        /// Reads one frame into the buffers; false when TCP closed.
        private func readFrame(until deadline: Double) throws -> Bool {
            guard !sawEOF else { return false }
            guard let event = try ws.nextEvent(timeout: max(0.001, deadline - monotonicSeconds())) else {
                sawEOF = true
                return false
            }
            switch event {
            case .message(let message):
                guard message.kind == .text else { throw ClientError("\(self): binary frame from the server") }
                let json = try JSONValue.parse(message.payload)
                switch try ServerFrame(json: json) {
                case .call: events.append(try Snapshot(json["call"] ?? .null))
                case .result: results.append(Reply(raw: json))
                case .signal: signals.append(json)
                }
            case .ping(let payload):
                try? ws.send(.pong, payload)
            case .pong:
                break
            case .close(let code, _):
                closeCode = .some(code)
                try? ws.sendClose(code?.rawValue ?? 1000)
            }
            return true
        }

        // MARK: Calls

        func initiate(
            to receiver: String, _ callType: String = "audio", timeout: Int? = nil,
            metadata: JSONValue? = nil
        ) throws -> Reply {
            var params: [(String, JSONValue)] = [("receiverId", .string(receiver)), ("callType", .string(callType))]
            if let timeout { params.append(("timeout", .integer(Int64(timeout)))) }
            if let metadata { params.append(("metadata", metadata)) }
            return try request("initiateCall", params)
        }

        func signal(_ sessionId: String, _ payload: JSONValue) throws -> Reply {
            try request("signal", [("sessionId", .string(sessionId)), ("payload", payload)])
        }

        func accept(_ sessionId: String) throws -> Reply {
            try request("acceptCall", [("sessionId", .string(sessionId))])
        }
        func cancel(_ sessionId: String) throws -> Reply {
            try request("cancelCall", [("sessionId", .string(sessionId))])
        }
        func end(_ sessionId: String) throws -> Reply { try request("endCall", [("sessionId", .string(sessionId))]) }

        func reject(_ sessionId: String, status: String? = nil, reason: String? = nil) throws -> Reply {
            var params: [(String, JSONValue)] = [("sessionId", .string(sessionId))]
            if let status { params.append(("status", .string(status))) }
            if let reason { params.append(("reason", .string(reason))) }
            return try request("rejectCall", params)
        }

        /// `getActiveCall`'s call, or nil.
        func activeCall() throws -> Snapshot? {
            let reply = try request("getActiveCall")
            guard reply.ok, let call = reply.data?["call"] else { throw ClientError("getActiveCall failed: \(reply)") }
            return call == .null ? nil : try Snapshot(call)
        }

        /// `getCallLogs` with string parameters (limit as an integer).
        func logs(limit: Int? = nil, _ params: [(String, String)] = []) throws -> Reply {
            var fields = params.map { ($0.0, JSONValue.string($0.1)) }
            if let limit { fields.append(("limit", .integer(Int64(limit)))) }
            return try request("getCallLogs", fields)
        }

        // MARK: Closing

        /// A clean client close (close frame, then TCP).
        func close() {
            if closeCode == nil, !sawEOF { try? ws.sendClose(1000) }
            ws.close()
        }

        /// Drops TCP without a close frame.
        func drop() { ws.close() }
    }
}
