import SignalProtocol

/// The test control API, only with `testing.enabled` (otherwise these paths
/// are 404 like any unknown one). Every route needs the test key in
/// `X-Test-Key`; the answers are documented in docs/TEST-API.md.
///
/// - `GET /v1/test/clock`, `POST /v1/test/clock {"mode":"manual"|"real"}` → the clock
/// - `POST /v1/test/clock/advance {"ms":N}` → `{"clock", "fired"}` once what fell due is delivered
/// - `POST /v1/test/devices/{uid}/{deviceId}/drop|hold|release` → 204 (`hold` takes `{"ms":N}` or nothing)
/// - `POST /v1/test/store/fail {"commits":N}` → `{"failingCommits"}`
/// - `POST /v1/test/crash` → `{"restored","ended"}`; `POST /v1/test/reset` → 204
/// - `GET /v1/test/transitions?sessionId&uid&afterSeq&limit` → `{"transitions","next"}`
/// - `GET /v1/test/tap?afterSeq` → a WebSocket streaming every transition
enum TestRoutes {
    /// The most an advance may move the clock: a day.
    static let maxAdvanceMillis: Int64 = 86_400_000
    /// The longest hold: ten minutes.
    static let maxHoldMillis: Int64 = 600_000
    static let maxTransitions = TransitionTap.capacity
    /// The most store commits one request may make fail.
    static let maxFailingCommits: Int64 = 1000

    /// Whether `path` is the test API's (answered only for loopback peers
    /// unless `testing.allowRemote`).
    static func serves(_ path: String) -> Bool { path == "/v1/test" || path.hasPrefix("/v1/test/") }

    static func add(to table: inout RouteTable, control: TestControl) {
        table.add("GET", "/v1/test/clock") { request, _ in
            authorized(request, control) { .respond(.json(.ok, clock(control))) }
        }
        table.add("POST", "/v1/test/clock") { request, _ in
            authorized(request, control) {
                guard let mode = body(request)?["mode"]?.stringValue.flatMap(TestClock.Mode.init(rawValue:)) else {
                    return .respond(.error(.badRequest, "the body must be {\"mode\": \"manual\" or \"real\"}"))
                }
                return perform(control) { () throws(TestControlError) in
                    try control.setClock(mode)
                    return .json(.ok, clock(control))
                }
            }
        }
        table.add("POST", "/v1/test/clock/advance") { request, _ in
            authorized(request, control) {
                guard let ms = body(request)?["ms"]?.integerValue, (0 ... maxAdvanceMillis).contains(ms) else {
                    return .respond(
                        .error(.badRequest, "the body must be {\"ms\": an integer from 0 to \(maxAdvanceMillis)}"))
                }
                return perform(control) { () throws(TestControlError) in
                    let fired = try control.advance(by: ms)
                    return .json(.ok, .object([("clock", clock(control)), ("fired", .integer(Int64(fired)))]))
                }
            }
        }
        table.add("POST", "/v1/test/devices/{uid}/{deviceId}/{fault}") { request, parameters in
            authorized(request, control) { device(request, parameters, control) }
        }
        table.add("POST", "/v1/test/store/fail") { request, _ in
            authorized(request, control) {
                guard let commits = body(request)?["commits"]?.integerValue, (0 ... maxFailingCommits).contains(commits)
                else {
                    return .respond(
                        .error(.badRequest, "the body must be {\"commits\": an integer from 0 to \(maxFailingCommits)}")
                    )
                }
                return perform(control) { () throws(TestControlError) in
                    try control.failCommits(Int(commits))
                    return .json(.ok, .object([("failingCommits", .integer(commits))]))
                }
            }
        }
        table.add("POST", "/v1/test/crash") { request, _ in
            authorized(request, control) {
                perform(control) { () throws(TestControlError) in
                    let report = try control.crash()
                    return .json(
                        .ok,
                        .object([
                            ("restored", .integer(Int64(report.restored))),
                            ("ended", .integer(Int64(report.ended))),
                        ]))
                }
            }
        }
        table.add("POST", "/v1/test/reset") { request, _ in
            authorized(request, control) {
                perform(control) { () throws(TestControlError) in
                    try control.reset()
                    return HTTPResponse(status: .noContent)
                }
            }
        }
        table.add("GET", "/v1/test/transitions") { request, _ in
            authorized(request, control) { transitions(request, control) }
        }
        table.add("GET", "/v1/test/tap") { request, _ in
            authorized(request, control) {
                do throws(BadQuery) {
                    return .webSocket(TapSession(tap: control.tap, replayAfter: try queryInteger(request, "afterSeq")))
                } catch {
                    return .respond(.error(.badRequest, "afterSeq must be an integer from 0"))
                }
            }
        }
    }

    private static func authorized(
        _ request: HTTPRequest, _ control: TestControl, _ route: () -> HTTPRoute
    ) -> HTTPRoute {
        guard let key = request.headers["X-Test-Key"] else {
            return .respond(.error(.unauthorized, "send the test key (testing.key) in the X-Test-Key header"))
        }
        guard control.isKey(key) else { return .respond(.error(.unauthorized, "wrong test key")) }
        return route()
    }

    /// Runs `operation` on the control's queue and answers from there.
    private static func perform(
        _ control: TestControl,
        _ operation: @escaping @Sendable () throws(TestControlError) -> HTTPResponse
    ) -> HTTPRoute {
        .later { sink in
            control.queue.async {
                do throws(TestControlError) {
                    sink.send(try operation())
                } catch {
                    sink.send(response(for: error))
                }
            }
        }
    }

    private static func response(for error: TestControlError) -> HTTPResponse {
        let status: HTTPStatus =
            switch error.code {
            case .notFound: .notFound
            case .conflict: .conflict
            case .unavailable: .serviceUnavailable
            case .storeFailed: .internalServerError
            }
        return .json(
            status,
            .object([
                (
                    "error",
                    .object([
                        ("code", .string(error.code.rawValue)),
                        ("message", .string(error.message)),
                    ])
                )
            ]))
    }

    private static func device(
        _ request: HTTPRequest, _ parameters: PathParameters,
        _ control: TestControl
    ) -> HTTPRoute {
        let uid = parameters["uid"] ?? "", deviceId = parameters["deviceId"] ?? ""
        guard Identifier.isValid(uid), Identifier.isValid(deviceId) else {
            return .respond(.error(.badRequest, "uid and deviceId must be \(Identifier.rule)"))
        }
        switch parameters["fault"] {
        case "drop":
            return perform(control) { () throws(TestControlError) in
                try control.drop(uid: uid, deviceId: deviceId)
                return HTTPResponse(status: .noContent)
            }
        case "hold":
            var milliseconds: Int64?
            if !request.body.isEmpty {
                guard let ms = body(request)?["ms"]?.integerValue, (1 ... maxHoldMillis).contains(ms) else {
                    return .respond(
                        .error(
                            .badRequest, "the body must be empty (until released) or {\"ms\": 1 to \(maxHoldMillis)}"))
                }
                milliseconds = ms
            }
            return perform(control) { [milliseconds] () throws(TestControlError) in
                try control.hold(uid: uid, deviceId: deviceId, milliseconds: milliseconds)
                return HTTPResponse(status: .noContent)
            }
        case "release":
            return perform(control) { () throws(TestControlError) in
                try control.release(uid: uid, deviceId: deviceId)
                return HTTPResponse(status: .noContent)
            }
        default:
            return .respond(.error(.notFound, "no such fault: drop, hold or release"))
        }
    }

    private static func transitions(_ request: HTTPRequest, _ control: TestControl) -> HTTPRoute {
        let after: Int64?, limit: Int64?
        do throws(BadQuery) {
            after = try queryInteger(request, "afterSeq")
            limit = try queryInteger(request, "limit")
            guard (1 ... Int64(maxTransitions)).contains(limit ?? 1) else { throw BadQuery() }
        } catch {
            return .respond(
                .error(.badRequest, "afterSeq must be an integer from 0, limit one from 1 to \(maxTransitions)"))
        }
        let page = control.tap.entries(
            sessionId: request.queryValue("sessionId"), uid: request.queryValue("uid"),
            afterSeq: after ?? 0, limit: Int(limit ?? Int64(maxTransitions)))
        return .respond(
            .json(
                .ok,
                .object([
                    ("transitions", .array(page.entries.map(\.json))),
                    ("next", .integer(page.next)),
                ])))
    }

    private static func clock(_ control: TestControl) -> JSONValue {
        let now = control.clock.now()
        return .object([
            ("mode", .string(control.clock.mode.rawValue)), ("wall", .integer(now.wall)),
            ("monotonic", .integer(now.monotonic)),
        ])
    }

    private static func body(_ request: HTTPRequest) -> JSONValue? {
        guard let value = try? JSONValue.parse(request.body), value.objectMembers != nil else { return nil }
        return value
    }

    private struct BadQuery: Error {}

    /// A query parameter that is absent (nil) or a non-negative integer;
    /// throws when it is something else.
    private static func queryInteger(_ request: HTTPRequest, _ name: String) throws(BadQuery) -> Int64? {
        guard let text = request.queryValue(name) else { return nil }
        guard let value = Int64(text), value >= 0 else { throw BadQuery() }
        return value
    }
}
