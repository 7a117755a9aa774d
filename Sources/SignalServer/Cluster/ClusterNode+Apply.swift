import SignalCore
import SignalProtocol

extension ClusterNode {
    /// Hands an input of `service` to the worker of its user (or call) as
    /// one transaction. Refused while stopping, as on one node, and, for a
    /// request or a connect, while the workers' queue is full
    /// (``overloaded(_:)``). One that cannot commit is answered with
    /// ``Refusal/clusterUnavailable``, unless its outcome is unknown
    /// (``outcomeUnknown(_:)``).
    func apply(
        _ kind: InputKind, _ description: TransitionInput, for service: SignalingService,
        _ input: @escaping SignalingService.Input
    ) {
        let admission = kind.admission(stopping: service.core.withLock { $0.stopping }, held: nil)
        guard case .run = admission else { return service.refuse(admission) }
        let queued = submit(
            ClusterTransaction(description: description, input: input), key: Self.routingKey(of: description),
            sheddable: kind.sheddable
        ) { [self] error, connectionLost in
            Log.warning("a cluster transition failed: \(error.message)")
            switch kind {
            case .request(let address, _) where connectionLost:
                service.deliver([outcomeUnknown(address)])
            case .request(let address, let id):
                service.refuse(.refuse(address, id: id, Refusal.clusterUnavailable))
            case .presence(let refusing?):
                service.deliver([
                    (
                        refusing.address,
                        .frame(service.resultFrame(id: refusing.id, .failure(Refusal.clusterUnavailable)))
                    ),
                    (refusing.address, .close(code: .internalError, reason: "not registered in the cluster")),
                ])
            case .presence(nil):
                // Presence must not keep a device that left.
                if case .disconnect(let device) = description { disconnectLater(device) }
            case .timer:
                break
            }
        }
        guard !queued else { return }
        switch kind {
        case .request(let address, let id):
            service.refuse(.refuse(address, id: id, overloaded(workers.retryAfterMillis)))
        case .presence(let refusing?):
            service.deliver([
                (
                    refusing.address,
                    .frame(service.resultFrame(id: refusing.id, .failure(overloaded(workers.retryAfterMillis))))
                ),
                (refusing.address, .close(code: .tryAgainLater, reason: "the node is overloaded; try again later")),
            ])
        case .presence(nil), .timer:
            break
        }
    }

    /// The refusal of a request the node has no room to queue, with when to try again.
    func overloaded(_ retryAfterMillis: Int64) -> SignalError {
        SignalError(
            .unavailable, "the node has more queued than it can run soon; try again later",
            retryAfterMs: retryAfterMillis)
    }

    /// What a request gets when the connection broke while its transaction
    /// ran: it may have committed in COMMIT (and its result may still come
    /// through the listener) or not, and no answer the node can give now is
    /// sure to be true. Closing the device's connection gives the request
    /// no answer rather than a wrong one; the client reconnects, resumes
    /// and sees what the request did, if anything.
    private func outcomeUnknown(_ address: DeviceAddress) -> (DeviceAddress, Delivery) {
        (
            address,
            .close(
                code: .internalError,
                reason: "the outcome of a request is unknown (the database connection broke); reconnect")
        )
    }

    /// What an input is queued by: its user's uid (so a device's inputs,
    /// and the reads that follow them, run in order on one worker), or its
    /// call's session id (inputs of no device, whose transaction locks the
    /// parties anyway).
    static func routingKey(of input: TransitionInput) -> String {
        switch input {
        case .request(_, _, let device), .connect(let device, _, _), .disconnect(let device): device.uid
        case .timer(.ring(let sessionId)), .unreachable(let sessionId): sessionId
        case .timer(.grace(let uid, _)): uid
        case .rebuild, .restart, .shutdown: ""
        }
    }
}

extension InputKind {
    /// Whether the input may be refused when the workers' queue is full: a
    /// request or a connect, whose client can try again; never a
    /// disconnect (presence would keep the device) or a timer.
    var sheddable: Bool {
        switch self {
        case .request, .presence(refusing: _?): true
        case .presence(refusing: nil), .timer: false
        }
    }
}
