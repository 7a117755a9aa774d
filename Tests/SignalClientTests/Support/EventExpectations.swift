import SignalClient
import SignalProtocol
import Testing

/// A client's two streams, recorded so tests can wait on them with deadlines.
struct ClientStreams {
    let events: StreamRecorder<ClientEvent>
    let notifications: StreamRecorder<CallNotification>

    init(_ client: SignalClient) {
        events = StreamRecorder(client.events)
        notifications = StreamRecorder(client.notifications)
    }

    /// The next event, which must be a call event.
    func nextCall(timeout: Double = 5, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Call {
        let event = await events.next(timeout: timeout)
        guard case .call(let call)? = event else {
            Issue.record("expected a call event, got \(String(describing: event))", sourceLocation: sourceLocation)
            throw ExpectationFailure()
        }
        return call
    }

    /// The next event, which must be `.disconnected`; returns its error.
    func nextDisconnect(
        timeout: Double = 5, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ClientError {
        let event = await events.next(timeout: timeout)
        guard case .disconnected(let error)? = event else {
            Issue.record("expected .disconnected, got \(String(describing: event))", sourceLocation: sourceLocation)
            throw ExpectationFailure()
        }
        return error
    }
}

/// Thrown after an `Issue` was recorded, to stop the test there.
struct ExpectationFailure: Error {}

/// The error `body` throws, which must be a ``ClientError`` (recording an
/// issue and throwing when it succeeds or throws something else).
func clientError<T>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async throws -> ClientError {
    do {
        let value = try await body()
        Issue.record("expected a ClientError, got \(value)", sourceLocation: sourceLocation)
    } catch let error as ClientError {
        return error
    } catch {
        Issue.record("expected a ClientError, got \(error)", sourceLocation: sourceLocation)
    }
    throw ExpectationFailure()
}
