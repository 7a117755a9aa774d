import SignalProtocol

/// `POST /v1/calls/{sessionId}/media-token` with `{"uid"}` (API key): the
/// REST twin of `getMediaToken`, for an app server that joins its users to
/// the call's media room itself. The same rules (a party of an `ongoing`
/// call) and the same error codes; the status says which kind of refusal.
enum MediaRoutes {
    static func add(to table: inout RouteTable, service: SignalingService) {
        table.add("POST", "/v1/calls/{sessionId}/media-token") { request, parameters in
            RestRoutes.authorized(request, service) {
                mediaToken(request, sessionId: parameters["sessionId"] ?? "", service)
            }
        }
    }

    private static func mediaToken(_ request: HTTPRequest, sessionId: String, _ service: SignalingService) -> HTTPRoute
    {
        guard let body = try? JSONValue.parse(request.body), let uid = body["uid"]?.stringValue else {
            return .respond(response(SignalError(.validation, "the body must be {\"uid\": …}")))
        }
        guard Identifier.isValid(uid) else {
            return .respond(response(SignalError(.validation, "uid must be \(Identifier.rule)")))
        }
        return .later { sink in
            service.mediaToken(sessionId: sessionId, uid: uid) { result in
                switch result {
                case .success(let data): sink.send(.json(.ok, data.json))
                case .failure(let error): sink.send(response(error))
                }
            }
        }
    }

    private static func response(_ error: SignalError) -> HTTPResponse {
        let status: HTTPStatus =
            switch error.code {
            case .validation: .badRequest
            case .sessionNotFound: .notFound
            case .notAParty, .notStarted, .terminated: .conflict
            case .mediaNotConfigured: .serviceUnavailable
            default: .internalServerError
            }
        return .error(status, error)
    }
}
