// CXProvider is not available on macOS (only iOS, Mac Catalyst, visionOS and
// watchOS), though CallKit and PushKit can be imported there: hence `!os(macOS)`.
#if canImport(CallKit) && canImport(PushKit) && !os(macOS)
    import AVFoundation
    import RingKit
    import SignalProtocol

    /// What the app implements, the third of the three steps (docs/IOS.md).
    /// Every method is called on the main actor.
    @available(iOS 18, watchOS 11, visionOS 2, *)
    @MainActor
    public protocol RingCallKitDelegate: AnyObject {
        /// The call was accepted (the user answered here, or the callee of an
        /// outgoing call did): show the call's screen and join its media
        /// (`signal`, or a LiveKit room through `mediaToken(for:)`).
        func presentCallScreen(call: Call)
        /// A call CallKit showed is over: close its screen and leave its media.
        func callEnded(_ end: CallEnd)
        /// The user muted or unmuted in CallKit's UI: mute the microphone.
        func callMuted(sessionId: String, muted: Bool)
        /// CallKit activated the audio session: start the call's audio now,
        /// not before.
        func didActivate(audioSession: AVAudioSession)
        func didDeactivate(audioSession: AVAudioSession)
        /// Every event of the client, after the coordinator saw it: RingCallKit
        /// reads `client.events` (a stream has one reader), so the app reads
        /// them here, the peer's `signal`s above all.
        func received(_ event: RingEvent)
    }

    @available(iOS 18, watchOS 11, visionOS 2, *)
    extension RingCallKitDelegate {
        public func callMuted(sessionId: String, muted: Bool) {}
        public func didActivate(audioSession: AVAudioSession) {}
        public func didDeactivate(audioSession: AVAudioSession) {}
        public func received(_ event: RingEvent) {}
    }
#endif
