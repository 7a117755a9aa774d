import SignalCore
import SignalProtocol

/// Push tokens over REST, for app servers that register devices themselves
/// (API key in `X-Api-Key`, as every REST route):
///
/// - `PUT /v1/users/{uid}/devices/{deviceId}/push-token` `{"platform","token","topic"?,"environment"?,"alertToken"?}` → `{"pushToken"}`
/// - `DELETE /v1/users/{uid}/devices/{deviceId}/push-token` → `{"removed"}`
/// - `GET /v1/users/{uid}/devices/{deviceId}/push-token` → `{"pushToken","push"}`, 404 without one
/// - `GET /v1/users/{uid}/push-tokens` → `{"uid","devices":[{"pushToken","push"}]}`
/// - `GET /v1/push` → what is configured and the outcomes counted since the start
enum PushRoutes {
    static func add(to table: inout RouteTable, service: SignalingService) {
        let device = "/v1/users/{uid}/devices/{deviceId}/push-token"
        table.add("PUT", device) { request, parameters in
            RestRoutes.authorized(request, service) {
                register(request, uid: parameters["uid"] ?? "", deviceId: parameters["deviceId"] ?? "", service)
            }
        }
        table.add("DELETE", device) { request, parameters in
            RestRoutes.authorized(request, service) {
                unregister(uid: parameters["uid"] ?? "", deviceId: parameters["deviceId"] ?? "", service)
            }
        }
        table.add("GET", device) { request, parameters in
            RestRoutes.authorized(request, service) {
                show(uid: parameters["uid"] ?? "", deviceId: parameters["deviceId"] ?? "", service)
            }
        }
        table.add("GET", "/v1/users/{uid}/push-tokens") { request, parameters in
            RestRoutes.authorized(request, service) { list(uid: parameters["uid"] ?? "", service) }
        }
        table.add("GET", "/v1/push") { request, _ in
            RestRoutes.authorized(request, service) { .respond(.json(.ok, overview(service))) }
        }
    }

    /// A refusal with the protocol's code (`ERR_VALIDATION`…), as the WebSocket would answer.
    private static func refusal(_ error: SignalError) -> HTTPRoute { .respond(RestRoutes.response(error)) }

    private static func invalid(uid: String, deviceId: String? = nil) -> HTTPRoute? {
        if !Identifier.isValid(uid) { return refusal(SignalError(.validation, "uid must be \(Identifier.rule)")) }
        if let deviceId, !Identifier.isValid(deviceId) {
            return refusal(SignalError(.validation, "deviceId must be \(Identifier.rule)"))
        }
        return nil
    }

    private static func register(
        _ request: HTTPRequest, uid: String, deviceId: String,
        _ service: SignalingService
    ) -> HTTPRoute {
        if let invalid = invalid(uid: uid, deviceId: deviceId) { return invalid }
        guard let body = try? JSONValue.parse(request.body), body.objectMembers != nil else {
            return .respond(.error(.badRequest, "the body must be a JSON object"))
        }
        let registration: PushRegistration
        do throws(SignalError) {
            registration = try PushRegistration(fields: JSONFields(body))
        } catch {
            return refusal(error)
        }
        return .later { sink in
            service.registerPushToken(registration, uid: uid, deviceId: deviceId) { result in
                switch result {
                case .success(let token): sink.send(.json(.ok, ResultData.pushToken(token).json))
                case .failure(let error): sink.send(RestRoutes.response(error))
                }
            }
        }
    }

    private static func unregister(uid: String, deviceId: String, _ service: SignalingService) -> HTTPRoute {
        if let invalid = invalid(uid: uid, deviceId: deviceId) { return invalid }
        return .later { sink in
            service.unregisterPushToken(uid: uid, deviceId: deviceId) { result in
                switch result {
                case .success(let removed): sink.send(.json(.ok, ResultData.pushTokenRemoved(removed).json))
                case .failure(let error): sink.send(RestRoutes.response(error))
                }
            }
        }
    }

    private static func show(uid: String, deviceId: String, _ service: SignalingService) -> HTTPRoute {
        if let invalid = invalid(uid: uid, deviceId: deviceId) { return invalid }
        guard let entry = service.pushTokens.devices(of: uid).first(where: { $0.token.deviceId == deviceId }) else {
            return .respond(.error(.notFound, "\(uid)/\(deviceId) has no push token"))
        }
        return .respond(.json(.ok, .object([("pushToken", entry.token.json), ("push", entry.state.json)])))
    }

    private static func list(uid: String, _ service: SignalingService) -> HTTPRoute {
        if let invalid = invalid(uid: uid) { return invalid }
        let devices = service.pushTokens.devices(of: uid).map { entry in
            JSONValue.object([("pushToken", entry.token.json), ("push", entry.state.json)])
        }
        return .respond(.json(.ok, .object([("uid", .string(uid)), ("devices", .array(devices))])))
    }

    private static func overview(_ service: SignalingService) -> JSONValue {
        let settings = service.config.push
        let totals = service.pushTokens.totals, alerts = service.pushTokens.alertTotals
        return .object([
            ("mode", .string(settings.mode.rawValue)),
            ("apns", .bool(settings.apns.isConfigured)),
            ("fcm", .bool(settings.fcm.isConfigured)),
            ("missedCallAlerts", .bool(settings.isEnabled && settings.missedCallAlerts)),
            ("outcomes", .object(PushOutcome.allCases.map { ($0.rawValue, .integer(Int64(totals[$0] ?? 0))) })),
            (
                "alertOutcomes",
                .object(PushOutcome.allCases.map { ($0.rawValue, .integer(Int64(alerts[$0] ?? 0))) })
            ),
        ])
    }
}
