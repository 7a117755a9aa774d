// CXProvider is not available on macOS (only iOS, Mac Catalyst, visionOS and
// watchOS), though CallKit and PushKit can be imported there: hence `!os(macOS)`.
#if canImport(CallKit) && canImport(PushKit) && !os(macOS)
    import AVFoundation
    import CallKit
    import Foundation
    import PushKit
    import SignalProtocol

    // The registry and the provider call back on the main queue (see init),
    // so these conformances are main-actor isolated; `@preconcurrency` has
    // the runtime check that they are (SE-0423).

    @available(iOS 18, watchOS 11, visionOS 2, *)
    extension RingCallKit: @preconcurrency PKPushRegistryDelegate {
        public func pushRegistry(
            _ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType
        ) {
            guard type == .voIP else { return }
            voipToken = pushCredentials.token
            registerTokens()
        }

        public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
            guard type == .voIP else { return }
            voipToken = nil
            registeredTokens = nil
        }

        /// Reports the call before anything else, as iOS requires: the
        /// coordinator's first action for any push is the report.
        public func pushRegistry(
            _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
            completion: @escaping @Sendable () -> Void
        ) {
            defer { completion() }
            guard type == .voIP else { return }
            perform(coordinator.receivedPush(Self.json(payload.dictionaryPayload)))
        }

        /// PushKit's dictionary as JSON: through JSONSerialization's bytes, so
        /// the portable parser reads what APNs delivered. Anything that does not
        /// serialise is an empty object, which the coordinator reports and ends.
        static func json(_ dictionary: [AnyHashable: Any]) -> JSONValue {
            guard JSONSerialization.isValidJSONObject(dictionary),
                let data = try? JSONSerialization.data(withJSONObject: dictionary),
                let value = try? JSONValue.parse(Array(data))
            else { return .object([]) }
            return value
        }
    }

    @available(iOS 18, watchOS 11, visionOS 2, *)
    extension RingCallKit: @preconcurrency CXProviderDelegate {
        public func providerDidReset(_ provider: CXProvider) {
            for action in pendingActions.values { action.fail() }
            pendingActions = [:]
            perform(coordinator.providerReset())
        }

        public func provider(_ provider: CXProvider, perform action: CXStartCallAction) {
            guard let uuid = CallUUID(uuidString: action.callUUID.uuidString) else { return action.fail() }
            pendingActions[.start(uuid)] = action
            let type: CallType = action.isVideo ? .video : .audio
            perform(coordinator.startCall(uuid, to: action.handle.value, type: type))
        }

        public func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) {
            guard let uuid = CallUUID(uuidString: action.callUUID.uuidString) else { return action.fail() }
            pendingActions[.answer(uuid)] = action
            perform(coordinator.answer(uuid))
        }

        public func provider(_ provider: CXProvider, perform action: CXEndCallAction) {
            guard let uuid = CallUUID(uuidString: action.callUUID.uuidString) else { return action.fail() }
            pendingActions[.end(uuid)] = action
            perform(coordinator.end(uuid))
        }

        public func provider(_ provider: CXProvider, perform action: CXSetMutedCallAction) {
            guard let uuid = CallUUID(uuidString: action.callUUID.uuidString) else { return action.fail() }
            pendingActions[.setMuted(uuid)] = action
            perform(coordinator.setMuted(uuid, muted: action.isMuted))
        }

        public func provider(_ provider: CXProvider, perform action: CXSetHeldCallAction) {
            guard let uuid = CallUUID(uuidString: action.callUUID.uuidString) else { return action.fail() }
            pendingActions[.setHeld(uuid)] = action
            perform(coordinator.setHeld(uuid, onHold: action.isOnHold))
        }

        /// CallKit gave up waiting for an answer or a start before the
        /// coordinator's bound: the action must not be completed any more, and
        /// the coordinator gives up as when its own bound passes.
        public func provider(_ provider: CXProvider, timedOutPerforming action: CXAction) {
            guard let callAction = action as? CXCallAction,
                let uuid = CallUUID(uuidString: callAction.callUUID.uuidString)
            else { return }
            pendingActions = pendingActions.filter { $0.value !== action }
            switch callAction {
            case is CXAnswerCallAction: perform(coordinator.timerFired(.answer(uuid)))
            case is CXStartCallAction: perform(coordinator.timerFired(.start(uuid)))
            default: break
            }
        }

        public func provider(_ provider: CXProvider, didActivate audioSession: AVAudioSession) {
            delegate?.didActivate(audioSession: audioSession)
        }

        public func provider(_ provider: CXProvider, didDeactivate audioSession: AVAudioSession) {
            delegate?.didDeactivate(audioSession: audioSession)
        }
    }
#endif
