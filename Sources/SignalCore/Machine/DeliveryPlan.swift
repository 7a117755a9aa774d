import SignalProtocol

/// What the driver does with one output of the machine: who is told what,
/// which timers start or stop, which calls are pushed or stop being pushed,
/// and which answers must be read from the store first. The one reader of
/// ``SignalingAction``: the single-node delivery and the cluster's
/// transaction both consume a plan, so a new action is handled in one place.
///
/// A plan is made before the output's changes are committed; when the commit
/// fails, ``afterFailedCommit`` is what may still happen (closes, and a
/// failure for the requester), nothing that would tell of a change the
/// store does not hold.
public struct DeliveryPlan: Sendable {
    /// Something for devices, in the order the machine made them.
    public enum Step: Sendable {
        /// A request's result, for the device that asked.
        case reply(DeviceAddress, id: String?, SignalingReply)
        /// A frame encoded once, the same bytes for each device (a call
        /// event, a relayed signal).
        case send([UInt8], to: [DeviceAddress])
        /// Close the device's connection.
        case close(DeviceAddress, code: WebSocketCloseCode, reason: String)
    }

    /// An `auth` with `resume`, answered once the user's calls changed after
    /// `afterSeq` are read (right behind the connect's own changes).
    public struct Resume: Sendable {
        public let address: DeviceAddress
        public let id: String?
        public let authentication: Authentication
        public let afterSeq: Int64
    }

    /// A request about a session the machine does not hold: the store says
    /// whether it ended, was never there, or is someone else's.
    public struct Lookup: Sendable {
        public let address: DeviceAddress
        public let id: String
        public let sessionId: String
        public let uid: String
    }

    public private(set) var steps: [Step] = []
    public private(set) var timers: [TimerChange] = []
    /// Calls that started ringing, with the callee devices that heard it
    /// on their connections (``PushMode/offline`` skips those).
    public private(set) var rings: [(call: Call, connected: [String])] = []
    /// Calls that stopped ringing: pushes still owed are dropped.
    public private(set) var ringsStopped: [Call] = []
    public private(set) var resumes: [Resume] = []
    public private(set) var lookups: [Lookup] = []

    public init(_ actions: [SignalingAction]) {
        for action in actions {
            switch action {
            case .reply(let address, let id, let reply):
                steps.append(.reply(address, id: id, reply))
            case .event(let call, let recipients):
                steps.append(.send(ServerFrame.call(call).encoded, to: recipients))
            case .signal(let signal, let address):
                steps.append(.send(ServerFrame.signal(signal).encoded, to: [address]))
            case .close(let address, let code, let reason):
                steps.append(.close(address, code: code, reason: reason))
            case .schedule(let timer, let at):
                timers.append(.schedule(timer, at: at))
            case .cancel(let timer):
                timers.append(.cancel(timer))
            case .replyResuming(let address, let id, let authentication, let afterSeq):
                resumes.append(Resume(address: address, id: id, authentication: authentication, afterSeq: afterSeq))
            case .resolveSession(let address, let id, let sessionId, let uid):
                lookups.append(Lookup(address: address, id: id, sessionId: sessionId, uid: uid))
            case .push(let call, let connected):
                rings.append((call, connected))
            case .pushStopped(let call):
                ringsStopped.append(call)
            }
        }
    }

    /// What is left when the output's changes were not committed: each
    /// requester gets ``Refusal/storeFailed``, closes still happen, lookups
    /// still answer (they read the store, not the change); no event, relay,
    /// timer or push (the recovery schedules what the rebuilt calls need).
    public var afterFailedCommit: DeliveryPlan {
        var plan = self
        plan.steps = steps.compactMap { step in
            switch step {
            case .reply(let address, let id, _): .reply(address, id: id, .failure(Refusal.storeFailed))
            case .send: nil
            case .close: step
            }
        }
        plan.timers = []
        plan.rings = []
        plan.ringsStopped = []
        return plan
    }

    /// Each step as one delivery per device, results encoded by `result`
    /// (which counts failures for `GET /metrics`).
    public func deliveries(
        encodingResults result: (String?, Result<JSONValue, SignalError>) -> [UInt8]
    ) -> [(DeviceAddress, Delivery)] {
        var deliveries: [(DeviceAddress, Delivery)] = []
        deliveries.reserveCapacity(steps.count)
        for step in steps {
            switch step {
            case .reply(let address, let id, let reply):
                deliveries.append((address, .frame(result(id, reply.map(\.json)))))
            case .send(let frame, let recipients):
                for address in recipients { deliveries.append((address, .frame(frame))) }
            case .close(let address, let code, let reason):
                deliveries.append((address, .close(code: code, reason: reason)))
            }
        }
        return deliveries
    }
}

/// A machine timer to start or drop.
public enum TimerChange: Sendable {
    /// Start `timer`, due when the monotonic clock reads `at` (ms).
    case schedule(SignalingTimer, at: Int64)
    /// Drop `timer` if it has not run.
    case cancel(SignalingTimer)
}

/// Something for one device's connection.
public enum Delivery: Sendable {
    /// A text frame, already encoded.
    case frame([UInt8])
    /// Close the WebSocket with this code.
    case close(code: WebSocketCloseCode, reason: String)
}
