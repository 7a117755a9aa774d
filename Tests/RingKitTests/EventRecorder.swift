import RingKit
import Testing

/// Reads a client's events into an ``Inbox``, so a test waits for each with a deadline.
final class EventRecorder: Sendable {
    let inbox = Inbox<RingEvent>()
    private let reader: Task<Void, Never>

    init(_ client: RingClient) {
        let inbox = self.inbox
        reader = Task {
            for await event in client.events { inbox.put(event) }
        }
    }

    deinit { reader.cancel() }

    /// The next event, recording an issue when none came in time.
    func next(sourceLocation: SourceLocation = #_sourceLocation) async -> RingEvent? {
        let event = await inbox.next()
        if event == nil { Issue.record("no event in time", sourceLocation: sourceLocation) }
        return event
    }

    /// The next call event, skipping connection changes.
    func nextCall(sourceLocation: SourceLocation = #_sourceLocation) async -> Call? {
        while let event = await next(sourceLocation: sourceLocation) {
            if case .call(let call) = event { return call }
        }
        return nil
    }

    /// Waits for the connection state `expected`; false when another call
    /// or signal came first or nothing did.
    func waitFor(_ expected: RingConnectionState, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        while let event = await next(sourceLocation: sourceLocation) {
            guard case .connection(let state) = event else {
                Issue.record("expected \(expected), got \(event)", sourceLocation: sourceLocation)
                return false
            }
            if state == expected { return true }
        }
        return false
    }
}
