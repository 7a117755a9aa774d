// CXProvider is not available on macOS (only iOS, Mac Catalyst, visionOS and
// watchOS), though CallKit and PushKit can be imported there: hence `!os(macOS)`.
#if canImport(CallKit) && canImport(PushKit) && !os(macOS)
    import CallKit
    import Foundation
    import PushKit
    import RingKit
    import SignalProtocol

    /// The owner of the app's `PKPushRegistry` and `CXProvider`. It decides
    /// nothing: each callback goes to the ``CallKitCoordinator`` and each of
    /// the coordinator's actions is performed here, so the rules live in code
    /// tested on Linux. Everything runs on the main actor: the registry and
    /// the provider are created to call back on the main queue.
    ///
    /// Create it at launch, before `didFinishLaunching` returns, so PushKit
    /// can deliver the push that launched the app (docs/IOS.md). Its
    /// availability is RingClient's: RingKit keeps its state in the standard
    /// library's `Mutex` (iOS 18, watchOS 11, visionOS 2).
    @available(iOS 18, watchOS 11, visionOS 2, *)
    @MainActor
    public final class RingCallKit: NSObject {
        public weak var delegate: (any RingCallKitDelegate)?

        let client: RingClient
        let login: @Sendable (RingClient) async throws(RingError) -> Void
        let provider: CXProvider
        let callController = CXCallController()
        let registry: PKPushRegistry
        let topic: String?
        let environment: PushEnvironment
        var coordinator: CallKitCoordinator
        /// CallKit's actions waiting for the coordinator's fulfil or fail.
        var pendingActions: [ProviderAction: CXAction] = [:]
        var timers: [CoordinatorTimer: Task<Void, Never>] = [:]
        var voipToken: Data?
        var alertToken: Data?
        var registeredTokens: (voip: Data, alert: Data?)?
        var events: Task<Void, Never>?

        /// - Parameters:
        ///   - client: the app's RingClient.
        ///   - login: logs `client` in (with the app's stored token): called
        ///     whenever a push, an answer or a call needs the server and the
        ///     client is not connected, a cold start from a push above all.
        ///   - topic: the app's bundle id (`PushRegistration.topic`).
        ///   - environment: `.sandbox` for development builds.
        ///   - configuration: CallKit's; by default ``defaultConfiguration()``.
        ///   - answerTimeoutSeconds: how long an answer (or a call out) may
        ///     wait for the login and the server before it fails.
        public init(
            client: RingClient, login: @escaping @Sendable (RingClient) async throws(RingError) -> Void,
            topic: String? = Bundle.main.bundleIdentifier, environment: PushEnvironment = .production,
            configuration: CXProviderConfiguration = RingCallKit.defaultConfiguration(),
            answerTimeoutSeconds: Double = 15
        ) {
            self.client = client
            self.login = login
            self.topic = topic
            self.environment = environment
            provider = CXProvider(configuration: configuration)
            registry = PKPushRegistry(queue: .main)
            coordinator = CallKitCoordinator(
                configuration: .init(answerTimeoutMs: Int64(answerTimeoutSeconds * 1000)),
                now: { Int64(Date().timeIntervalSince1970 * 1000) })
            super.init()
            // A nil queue: the provider calls its delegate on the main queue.
            provider.setDelegate(self, queue: nil)
            registry.delegate = self
            registry.desiredPushTypes = [.voIP]
            events = Task { [weak self] in
                guard let stream = self?.client.events else { return }
                for await event in stream { self?.received(event) }
            }
            perform(coordinator.appLaunched())
        }

        /// Video and audio calls, one at a time, no hold, generic handles
        /// (uids), in Recents.
        public static func defaultConfiguration() -> CXProviderConfiguration {
            let configuration = CXProviderConfiguration()
            configuration.supportsVideo = true
            configuration.maximumCallGroups = 1
            configuration.maximumCallsPerCallGroup = 1
            configuration.supportedHandleTypes = [.generic]
            configuration.includesCallsInRecents = true
            return configuration
        }

        /// The app's regular remote-notification token
        /// (`application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`):
        /// registered with the VoIP token as `alertToken`, for missed-call alerts.
        public func setAlertToken(_ deviceToken: Data) {
            alertToken = deviceToken
            registerTokens()
        }

        /// Calls `uid` through CallKit (it shows in the system's call UI and
        /// Recents); ``RingCallKitDelegate/presentCallScreen(call:)`` follows
        /// when the callee answers.
        public func startCall(to uid: String, type: CallType) {
            let action = CXStartCallAction(call: UUID(), handle: CXHandle(type: .generic, value: uid))
            action.isVideo = type == .video
            callController.request(CXTransaction(action: action)) { _ in }
        }

        // MARK: Performing the coordinator's actions

        func perform(_ actions: [CallKitAction]) {
            for action in actions { perform(action) }
        }

        private func perform(_ action: CallKitAction) {
            switch action {
            case .reportNewIncomingCall(let report):
                guard let uuid = UUID(uuidString: report.uuid.uuidString) else { return }
                let update = CXCallUpdate()
                update.remoteHandle = CXHandle(type: .generic, value: report.handle)
                update.localizedCallerName = report.displayName
                update.hasVideo = report.hasVideo
                update.supportsHolding = false
                update.supportsGrouping = false
                update.supportsUngrouping = false
                update.supportsDTMF = false
                let callUUID = report.uuid
                provider.reportNewIncomingCall(with: uuid, update: update) { error in
                    let outcome = Self.outcome(of: error)
                    // The completion runs on the delegate queue: the main one.
                    MainActor.assumeIsolated {
                        self.perform(self.coordinator.reportedIncomingCall(callUUID, outcome: outcome))
                    }
                }
            case .reportCallEnded(let callUUID, let reason):
                guard let uuid = UUID(uuidString: callUUID.uuidString) else { return }
                provider.reportCall(with: uuid, endedAt: nil, reason: Self.cxReason(reason))
            case .reportOutgoingConnecting(let callUUID):
                guard let uuid = UUID(uuidString: callUUID.uuidString) else { return }
                provider.reportOutgoingCall(with: uuid, startedConnectingAt: nil)
            case .reportOutgoingConnected(let callUUID):
                guard let uuid = UUID(uuidString: callUUID.uuidString) else { return }
                provider.reportOutgoingCall(with: uuid, connectedAt: nil)
            case .fulfill(let providerAction):
                pendingActions.removeValue(forKey: providerAction)?.fulfill()
            case .fail(let providerAction):
                pendingActions.removeValue(forKey: providerAction)?.fail()
            case .connect:
                Task {
                    // A failed login leaves the client disconnected; the
                    // coordinator hears that through the connection events.
                    try? await login(client)
                }
            case .send(let command):
                Task { await send(command) }
            case .scheduleTimer(let timer, let afterMs):
                timers[timer]?.cancel()
                timers[timer] = Task {
                    try? await Task.sleep(nanoseconds: UInt64(max(0, afterMs)) * 1_000_000)
                    guard !Task.isCancelled else { return }
                    timers[timer] = nil
                    perform(coordinator.timerFired(timer))
                }
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .presentCallScreen(let call):
                delegate?.presentCallScreen(call: call)
            case .callEnded(let end):
                delegate?.callEnded(end)
            case .setMuted(let sessionId, let muted):
                delegate?.callMuted(sessionId: sessionId, muted: muted)
            }
        }

        private func send(_ command: ServerCommand) async {
            do {
                let call: Call
                switch command {
                case .ringing(let sessionId): call = try await client.ringing(sessionId)
                case .acceptCall(let sessionId): call = try await client.acceptCall(sessionId)
                case .rejectCall(let sessionId, let reason):
                    call = try await client.rejectCall(sessionId, reason: reason)
                case .endCall(let sessionId): call = try await client.endCall(sessionId)
                case .cancelCall(let sessionId): call = try await client.cancelCall(sessionId)
                case .initiateCall(let uid, let type, let clientCallId):
                    call = try await client.initiateCall(to: uid, type: type, clientCallId: clientCallId)
                }
                perform(coordinator.commandSucceeded(command, call: call))
            } catch {
                perform(coordinator.commandFailed(command, code: error.code))
            }
        }

        // MARK: The client's events

        private func received(_ event: RingEvent) {
            defer { delegate?.received(event) }
            switch event {
            case .call(let call):
                perform(coordinator.serverCall(call))
            case .connection(let state):
                let connection: CoordinatorConnection
                switch state {
                case .disconnected: connection = .disconnected
                case .connected(loggedIn: true):
                    guard let uid = client.uid, let deviceId = client.deviceId else { return }
                    connection = .loggedIn(uid: uid, deviceId: deviceId)
                default: connection = .connecting
                }
                perform(coordinator.connectionChanged(connection))
                if case .loggedIn = connection { registerTokens() }
            default:
                break
            }
        }

        /// Registers the VoIP token (with the alert token) once logged in,
        /// again whenever either changes.
        func registerTokens() {
            guard coordinator.isLoggedIn, let voip = voipToken else { return }
            if let registered = registeredTokens, registered.voip == voip, registered.alert == alertToken { return }
            let alert = alertToken
            guard
                let registration = try? PushRegistration(
                    platform: .apnsVoip, token: Self.hex(voip), topic: topic, environment: environment,
                    alertToken: alert.map(Self.hex))
            else { return }
            registeredTokens = (voip, alert)
            Task {
                do {
                    try await client.registerPushToken(registration)
                } catch {
                    // Tried again at the next login.
                    registeredTokens = nil
                }
            }
        }

        // MARK: Mappings

        static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

        nonisolated static func outcome(of error: (any Error)?) -> IncomingReportOutcome {
            guard let error else { return .shown }
            if let callKitError = error as? CXErrorCodeIncomingCallError, callKitError.code == .callUUIDAlreadyExists {
                return .alreadyReported
            }
            return .refused
        }

        static func cxReason(_ reason: CallEndedReason) -> CXCallEndedReason {
            switch reason {
            case .failed: return .failed
            case .remoteEnded: return .remoteEnded
            case .unanswered: return .unanswered
            case .answeredElsewhere: return .answeredElsewhere
            case .declinedElsewhere: return .declinedElsewhere
            }
        }
    }
#endif
