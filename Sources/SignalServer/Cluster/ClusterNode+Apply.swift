import SignalCore
import SignalProtocol

extension ClusterNode {
    /// Hands an input of `service` to the worker as one transaction.
    /// Refused while stopping, as on one node; one that cannot commit is
    /// answered with ``Refusal/clusterUnavailable``.
    func apply(
        _ kind: InputKind, _ description: TransitionInput, for service: SignalingService,
        _ input: @escaping SignalingService.Input
    ) {
        let admission = kind.admission(stopping: service.core.withLock { $0.stopping }, held: nil)
        guard case .run = admission else { return service.refuse(admission) }
        submit(ClusterTransaction(description: description, input: input)) { [self] error in
            Log.warning("a cluster transition failed: \(error.message)")
            switch kind {
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
    }
}
