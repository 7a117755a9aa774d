import SignalProtocol

/// Users' profiles and do-not-disturb over REST (API key):
///
/// - `PUT /v1/users/{uid}` `{"name","avatarUrl"?,"metadata"?}` → the user
/// - `GET /v1/users/{uid}` → the user, 404 when nothing is set
/// - `DELETE /v1/users/{uid}` → 204, 404 when nothing was set
/// - `PUT /v1/users/{uid}/do-not-disturb` `{"mode","until"?}` → the user
///
/// The user is `{"uid","name"?,"avatarUrl"?,"metadata"?,"doNotDisturb","updatedAt"}`.
enum UserRoutes {
    static func add(to table: inout RouteTable, service: SignalingService) {
        table.add("PUT", "/v1/users/{uid}") { request, parameters in
            RestRoutes.authorized(request, service) {
                update(request, uid: parameters["uid"] ?? "", service) { fields throws(SignalError) in
                    let profile = try UserProfile(fields: fields)
                    return { $0.profile = profile }
                }
            }
        }
        table.add("GET", "/v1/users/{uid}") { request, parameters in
            RestRoutes.authorized(request, service) { show(uid: parameters["uid"] ?? "", service) }
        }
        table.add("DELETE", "/v1/users/{uid}") { request, parameters in
            RestRoutes.authorized(request, service) { delete(uid: parameters["uid"] ?? "", service) }
        }
        table.add("PUT", "/v1/users/{uid}/do-not-disturb") { request, parameters in
            RestRoutes.authorized(request, service) { doNotDisturb(request, uid: parameters["uid"] ?? "", service) }
        }
    }

    private static func response(_ error: SignalError) -> HTTPResponse { RestRoutes.response(error) }

    /// The refusal of a uid that is not one (nil for a valid uid).
    private static func invalid(uid: String) -> SignalError? {
        Identifier.isValid(uid) ? nil : SignalError(.validation, "uid must be \(Identifier.rule)")
    }

    private static func fields(_ request: HTTPRequest, uid: String) -> Result<JSONFields, SignalError> {
        if let invalid = invalid(uid: uid) { return .failure(invalid) }
        guard let body = try? JSONValue.parse(request.body), body.objectMembers != nil else {
            return .failure(SignalError(.validation, "the body must be a JSON object"))
        }
        return .success(JSONFields(body))
    }

    private static func update(
        _ request: HTTPRequest, uid: String, _ service: SignalingService,
        _ parse: (JSONFields) throws(SignalError) -> @Sendable (inout UserRecord) -> Void
    ) -> HTTPRoute {
        let change: @Sendable (inout UserRecord) -> Void
        do throws(SignalError) {
            change = try parse(try fields(request, uid: uid).get())
        } catch {
            return .respond(response(error))
        }
        return .later { sink in
            service.updateUser(uid: uid, change) { result in
                switch result {
                case .success(let update): sink.send(.json(.ok, update.after.json))
                case .failure(let error): sink.send(response(error))
                }
            }
        }
    }

    private static func doNotDisturb(_ request: HTTPRequest, uid: String, _ service: SignalingService) -> HTTPRoute {
        let setting: DoNotDisturb
        do throws(SignalError) {
            setting = try DoNotDisturb(fields: try fields(request, uid: uid).get())
        } catch {
            return .respond(response(error))
        }
        return .later { sink in
            service.setDoNotDisturb(setting, uid: uid) { result in
                switch result {
                case .success(let update): sink.send(.json(.ok, update.after.json))
                case .failure(let error): sink.send(response(error))
                }
            }
        }
    }

    private static func show(uid: String, _ service: SignalingService) -> HTTPRoute {
        if let invalid = invalid(uid: uid) { return .respond(response(invalid)) }
        return .later { sink in
            service.user(uid: uid) { result in
                switch result {
                case .success(let record?): sink.send(.json(.ok, record.json))
                case .success(nil): sink.send(.error(.notFound, "\(uid) has no profile and no do-not-disturb"))
                case .failure(let error): sink.send(response(error))
                }
            }
        }
    }

    /// Removes the profile and the do-not-disturb.
    private static func delete(uid: String, _ service: SignalingService) -> HTTPRoute {
        if let invalid = invalid(uid: uid) { return .respond(response(invalid)) }
        return .later { sink in
            service.updateUser(uid: uid, { $0 = UserRecord(uid: $0.uid, updatedAt: $0.updatedAt) }) { result in
                switch result {
                case .success(let update) where update.before.isEmpty:
                    sink.send(.error(.notFound, "\(uid) has no profile and no do-not-disturb"))
                case .success: sink.send(HTTPResponse(status: .noContent))
                case .failure(let error): sink.send(response(error))
                }
            }
        }
    }
}
